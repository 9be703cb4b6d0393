/// The low-level signature check under ID-token verification, for advanced users and conformance
/// suites (Wycheproof, RFC 7520, RFC 8037).
public enum JWS {
    /// Verifies `signature` over `message` (the JWS signing input) with `key` under `algorithm`.
    ///
    /// Checks, before OpenSSL sees anything, that the key may verify the algorithm (type, curve,
    /// `use`, `key_ops`, `alg`) and that the signature has exactly the key's length (RSA: the modulus
    /// length; ECDSA: twice the coordinate size, raw `r‖s`; Ed25519: 64 bytes; HMAC: the digest
    /// length). HMAC keys must be at least as long as the digest (RFC 7518 §3.2).
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` when the key cannot verify this algorithm;
    ///   ``OIDCError/Code/invalidSignature`` when the signature is malformed or does not verify.
    public static func verify(signature: [UInt8], over message: [UInt8], with key: JWK, algorithm: JWSAlgorithm) throws(OIDCError) {
        var failure: OIDCError?
        signature.withUnsafeBytes { signatureBytes in
            message.withUnsafeBytes { messageBytes in
                do throws(OIDCError) { try verify(signature: signatureBytes, over: messageBytes, with: key, algorithm: algorithm) } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    static func verify(
        signature: UnsafeRawBufferPointer, over message: UnsafeRawBufferPointer, with key: JWK, algorithm: JWSAlgorithm
    ) throws(OIDCError) {
        guard key.mayVerify(algorithm) else {
            throw OIDCError(
                .invalidKey, "The key (kty \(UntrustedText.sanitized(key.keyType, limit: 40))\(key.curve.map { ", crv \(UntrustedText.sanitized($0, limit: 40))" } ?? "")) cannot verify \(algorithm.rawValue).",
                context: ["alg": algorithm.rawValue]
            )
        }
        let valid: Bool
        switch key.material {
        case .symmetric(let secret):
            valid = try verifyHMAC(signature: signature, message: message, secret: secret.bytes, algorithm: algorithm)
        case .asymmetric(let publicKey):
            let digest = try digest(for: algorithm)
            switch algorithm {
            case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512:
                guard signature.count == publicKey.size else { throw wrongLength(algorithm, expected: publicKey.size) }
                let scheme: OpenSSLPublicKey.Scheme = switch algorithm {
                case .ps256, .ps384, .ps512: .pss(digest!)
                default: .pkcs1(digest!)
                }
                valid = publicKey.verify(signature: signature, message: message, scheme: scheme)
            case .es256, .es384, .es512:
                let coordinate = (publicKey.bits + 7) / 8
                guard let der = ECDSASignature.der(fromRaw: signature, coordinateSize: coordinate) else {
                    throw wrongLength(algorithm, expected: 2 * coordinate)
                }
                valid = der.withUnsafeBytes { publicKey.verify(signature: $0, message: message, scheme: .ecdsa(digest!)) }
            case .edDSA, .ed25519:
                guard signature.count == 64 else { throw wrongLength(algorithm, expected: 64) }
                valid = publicKey.verify(signature: signature, message: message, scheme: .ed25519)
            case .hs256, .hs384, .hs512:
                valid = false  // mayVerify refuses asymmetric keys for HMAC
            }
        }
        guard valid else {
            throw OIDCError(.invalidSignature, "The \(algorithm.rawValue) signature does not verify.", context: ["alg": algorithm.rawValue])
        }
    }

    private static func digest(for algorithm: JWSAlgorithm) throws(OIDCError) -> OpenSSLDigest? {
        let digest: OpenSSLDigest?
        switch algorithm {
        case .rs256, .ps256, .es256, .hs256: digest = OpenSSLDigest.sha256
        case .rs384, .ps384, .es384, .hs384: digest = OpenSSLDigest.sha384
        case .rs512, .ps512, .es512, .hs512: digest = OpenSSLDigest.sha512
        case .edDSA, .ed25519: return nil
        }
        guard let digest else { throw OIDCError(.cryptoFailure, "OpenSSL has no \(algorithm.digestName ?? "") digest available.") }
        return digest
    }

    private static func verifyHMAC(
        signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, secret: [UInt8], algorithm: JWSAlgorithm
    ) throws(OIDCError) -> Bool {
        guard let name = algorithm.digestName, algorithm.isHMACAlgorithm else { return false }
        let size = name == "SHA256" ? 32 : name == "SHA384" ? 48 : 64
        guard secret.count >= size else {
            throw OIDCError(.invalidKey, "An \(algorithm.rawValue) key must have at least \(size) bytes (RFC 7518 §3.2).")
        }
        guard signature.count == size else { throw wrongLength(algorithm, expected: size) }
        let expected = try LibCrypto.hmac(digest: name, key: secret, data: Array(message))
        var difference: UInt8 = 0
        for i in 0..<size { difference |= expected[i] ^ signature[i] }
        return difference == 0
    }

    private static func wrongLength(_ algorithm: JWSAlgorithm, expected: Int) -> OIDCError {
        OIDCError(
            .invalidSignature, "The \(algorithm.rawValue) signature must be exactly \(expected) bytes.",
            context: ["alg": algorithm.rawValue]
        )
    }
}
