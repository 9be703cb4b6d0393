internal import COpenSSL

/// A private signing key: generated, or read from PEM or a private JWK, with its public JWK, and
/// signatures in JWS form (raw `r‖s` for ECDSA). It signs client assertions (``JWSSigningKey``), and
/// tokens for tests and the local test provider.
///
/// The owner of its OpenSSL pointer; `@unchecked Sendable` because an `EVP_PKEY` that is never
/// mutated after construction may be used from several threads (OpenSSL 3 threading rules).
package final class OpenSSLPrivateKey: @unchecked Sendable {
    private let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }
    /// Takes ownership of `pointer`, an `EVP_PKEY` holding a private key.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// The key's JWK `kty`: `RSA`, `EC` or `OKP` (Ed25519); `nil` for another type.
    package var keyType: String? {
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_RSA: "RSA"
        case EVP_PKEY_EC: "EC"
        case EVP_PKEY_ED25519: "OKP"
        default: nil
        }
    }

    /// The key size in bits (the RSA modulus, the EC field).
    package var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// Checks that the private and public parts belong together (OpenSSL's pairwise check).
    func checkPair() throws(OIDCError) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw Self.failure("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_pairwise_check(context) == 1 else {
            _ = LibCrypto.drainErrorQueue()
            throw OIDCError(.invalidKey, "The private key's parts do not make one key pair.")
        }
    }

    /// The kinds of key this can generate.
    package enum Kind: Sendable, Equatable {
        case rsa(bits: Int)
        case ec(curve: String)
        case ed25519
    }

    /// A fresh key from OpenSSL's generator.
    package static func generate(_ kind: Kind) throws(OIDCError) -> OpenSSLPrivateKey {
        let name: String
        switch kind {
        case .rsa: name = "RSA"
        case .ec: name = "EC"
        case .ed25519: name = "ED25519"
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else { throw failure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw failure("EVP_PKEY_keygen_init") }
        switch kind {
        case .rsa(let bits):
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else { throw failure("RSA key size") }
        case .ec(let curve):
            guard EVP_PKEY_CTX_set_group_name(context, curve) == 1 else { throw failure("EC curve \(curve)") }
        case .ed25519:
            break
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw failure("EVP_PKEY_generate") }
        return OpenSSLPrivateKey(key)
    }

    /// Reads a PEM private key (PKCS#8 or traditional).
    package init(pem: String) throws(OIDCError) {
        var text = pem
        let key: OpaquePointer? = text.withUTF8 { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else {
            _ = LibCrypto.drainErrorQueue()
            throw OIDCError(.invalidKey, "The PEM text is not a private key OpenSSL can read.")
        }
        pointer = key
    }

    /// The key as unencrypted PKCS#8 PEM (what libjwt wants).
    package func pem() throws(OIDCError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw Self.failure("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else { throw Self.failure("PEM_write_bio_PrivateKey") }
        var data: UnsafeMutablePointer<CChar>?
        let length = coidc_bio_get_mem_data(bio, &data)
        guard let data, length > 0 else { throw Self.failure("BIO_get_mem_data") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The public key as DER SubjectPublicKeyInfo.
    package func publicKeyDER() throws(OIDCError) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pointer, &output)
        guard length > 0, let output else { throw Self.failure("i2d_PUBKEY") }
        defer { CRYPTO_free(output, #file, #line) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The public half as JWK members (`kty`, `n`/`e`, `crv`/`x`/`y`), base64url-encoded.
    package func publicJWKMembers() throws(OIDCError) -> [String: String] {
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_RSA:
            return ["kty": "RSA", "n": Base64URLEncoding.encode(try bigNumber("n")), "e": Base64URLEncoding.encode(try bigNumber("e"))]
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var nameLength = 0
            guard EVP_PKEY_get_utf8_string_param(pointer, "group", &name, name.count, &nameLength) == 1 else {
                throw Self.failure("EC group name")
            }
            let group = String(decoding: name.prefix(nameLength).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let curve = ["prime256v1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"][group] ?? group
            var point = [UInt8](repeating: 0, count: 133)
            var pointLength = 0
            guard EVP_PKEY_get_octet_string_param(pointer, "encoded-pub-key", &point, point.count, &pointLength) == 1,
                pointLength > 1, point[0] == 0x04
            else { throw Self.failure("EC public point") }
            let size = (pointLength - 1) / 2
            return [
                "kty": "EC", "crv": curve, "x": Base64URLEncoding.encode(point[1..<(1 + size)]),
                "y": Base64URLEncoding.encode(point[(1 + size)..<(1 + 2 * size)]),
            ]
        case EVP_PKEY_ED25519:
            var raw = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_get_raw_public_key(pointer, &raw, &length) == 1, length == 32 else { throw Self.failure("Ed25519 public key") }
            return ["kty": "OKP", "crv": "Ed25519", "x": Base64URLEncoding.encode(raw)]
        default:
            throw OIDCError(.invalidKey, "Only RSA, EC and Ed25519 private keys are supported.")
        }
    }

    private func bigNumber(_ name: String) throws(OIDCError) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, name, &number) == 1, let number else { throw Self.failure("RSA parameter \(name)") }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }

    /// Signs `message` as JWS `algorithm` requires: PKCS#1 v1.5, PSS (salt = digest length),
    /// ECDSA as raw `r‖s`, Ed25519, or HMAC is refused (no private key for that).
    package func sign(_ message: [UInt8], algorithm: JWSAlgorithm) throws(OIDCError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw Self.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        let digest: OpenSSLDigest? = switch algorithm.digestName {
        case "SHA256": OpenSSLDigest.sha256
        case "SHA384": OpenSSLDigest.sha384
        case "SHA512": OpenSSLDigest.sha512
        default: nil
        }
        guard !algorithm.isHMACAlgorithm else { throw OIDCError(.invalidKey, "HMAC tokens are signed with a secret, not a private key.") }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, algorithm.isEdDSAAlgorithm ? nil : digest?.pointer, nil, pointer) == 1 else {
            throw Self.failure("EVP_DigestSignInit for \(algorithm.rawValue)")
        }
        if algorithm.rawValue.hasPrefix("PS"), let digest {
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(digest.size)) == 1,
                EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, digest.pointer) == 1
            else { throw Self.failure("PSS parameters") }
        }
        var length = 0
        var signature = [UInt8](repeating: 0, count: max(Int(EVP_PKEY_get_size(pointer)), 64) + 16)
        // OpenSSL wants a non-null pointer even for an empty message.
        let ok = (message.isEmpty ? [0] : message).withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { output in
                length = output.count
                return EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, message.count)
            }
        }
        guard ok == 1 else { throw Self.failure("EVP_DigestSign with \(algorithm.rawValue)") }
        let der = Array(signature.prefix(length))
        switch algorithm {
        case .es256, .es384, .es512:
            let size = algorithm == .es256 ? 32 : algorithm == .es384 ? 48 : 66
            guard let raw = ECDSASignature.raw(fromDER: der, coordinateSize: size) else { throw Self.failure("ECDSA DER signature") }
            return raw
        default:
            return der
        }
    }

    static func failure(_ step: String) -> OIDCError {
        OIDCError(.cryptoFailure, "OpenSSL failed (\(step)): \(LibCrypto.drainErrorQueue())")
    }
}
