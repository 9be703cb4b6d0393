/// A public JSON Web Key (RFC 7517) ready to verify signatures.
///
/// RSA (at least 2048 bits), EC (P-256, P-384, P-521; point checked on the curve, coordinates of the
/// exact length), OKP (Ed25519) and, for HMAC with an explicitly configured secret, `oct`. The
/// OpenSSL key is built once, when the JWK is parsed, and reused for every verification.
public struct JWK: Sendable {
    /// `kty`: `RSA`, `EC`, `OKP` or `oct`.
    public let keyType: String
    /// `kid`, if any.
    public let keyID: String?
    /// `use`: a key whose use is not `sig` never verifies.
    public let use: String?
    /// `key_ops`: a key whose operations do not include `verify` never verifies.
    public let keyOperations: [String]?
    /// `alg`: when present, the only algorithm the key verifies.
    public let algorithm: String?
    /// `crv` for EC and OKP keys.
    public let curve: String?

    enum Material: Sendable {
        case asymmetric(OpenSSLPublicKey)
        /// An HMAC key: a client secret, never shown (see ``SecretBytes``).
        case symmetric(SecretBytes)
    }

    let material: Material

    /// Smallest RSA modulus accepted.
    package static let minimumRSAModulusBits = 2048
    /// Largest RSA modulus accepted (bounds the cost of one verification).
    package static let maximumRSAModulusBits = 16384

    /// Parses one JWK from its JSON text.
    public init(json: [UInt8]) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.invalidKey, "The JWK is not a valid JSON object: \(error).")
        }
        try self.init(members: object)
    }

    /// Parses one JWK from its JSON text.
    public init(json: String) throws(OIDCError) { try self.init(json: Array(json.utf8)) }

    /// Builds a JWK from a parsed JSON object.
    package init(members object: [String: JSONValue]) throws(OIDCError) {
        func string(_ name: String) throws(OIDCError) -> String? {
            guard let value = object[name] else { return nil }
            guard let text = value.stringValue else { throw OIDCError(.invalidKey, "The JWK member '\(name)' must be a string.") }
            return text
        }
        func bytes(_ name: String) throws(OIDCError) -> [UInt8] {
            guard let text = try string(name) else { throw OIDCError(.invalidKey, "The JWK lacks '\(name)'.") }
            guard let decoded = Base64URLEncoding.decode(text), !decoded.isEmpty else {
                throw OIDCError(.invalidKey, "The JWK member '\(name)' is not unpadded base64url.")
            }
            return decoded
        }
        guard let keyType = try string("kty") else { throw OIDCError(.invalidKey, "The JWK has no 'kty'.") }
        self.keyType = keyType
        keyID = try string("kid")
        use = try string("use")
        algorithm = try string("alg")
        curve = try string("crv")
        if let operations = object["key_ops"] {
            guard let list = operations.arrayValue?.compactMap(\.stringValue), list.count == operations.arrayValue?.count else {
                throw OIDCError(.invalidKey, "The JWK member 'key_ops' must be an array of strings.")
            }
            keyOperations = list
        } else {
            keyOperations = nil
        }
        switch keyType {
        case "RSA":
            var modulus = try bytes("n")
            while modulus.first == 0, modulus.count > 1 { modulus.removeFirst() }  // tolerated leading zero octet
            let exponent = try bytes("e")
            let bits = (modulus.count - 1) * 8 + (8 - modulus[0].leadingZeroBitCount)
            guard bits >= Self.minimumRSAModulusBits else {
                throw OIDCError(.invalidKey, "The RSA key has \(bits) bits; at least \(Self.minimumRSAModulusBits) are required.")
            }
            guard bits <= Self.maximumRSAModulusBits else {
                throw OIDCError(.invalidKey, "The RSA key has \(bits) bits; at most \(Self.maximumRSAModulusBits) are accepted.")
            }
            guard exponent.count <= 8, exponent.first != 0, (exponent.last ?? 0) & 1 == 1, exponent != [1] else {
                throw OIDCError(.invalidKey, "The RSA key's public exponent is not a valid odd exponent of at most 64 bits.")
            }
            material = .asymmetric(try OpenSSLPublicKey.rsa(modulus: modulus, exponent: exponent))
        case "EC":
            let size: Int
            switch curve {
            case "P-256": size = 32
            case "P-384": size = 48
            case "P-521": size = 66
            default: throw OIDCError(.invalidKey, "The EC key's curve '\(UntrustedText.sanitized(curve ?? "none", limit: 40))' is not supported (P-256, P-384, P-521).")
            }
            let x = try bytes("x")
            let y = try bytes("y")
            guard x.count == size, y.count == size else {
                throw OIDCError(.invalidKey, "The \(curve!) key's coordinates must be exactly \(size) bytes each.")
            }
            material = .asymmetric(try OpenSSLPublicKey.ec(curve: curve!, x: x, y: y))
        case "OKP":
            guard curve == "Ed25519" else {
                throw OIDCError(.invalidKey, "The OKP key's curve '\(UntrustedText.sanitized(curve ?? "none", limit: 40))' is not supported (Ed25519).")
            }
            let x = try bytes("x")
            guard x.count == 32 else { throw OIDCError(.invalidKey, "An Ed25519 key must be exactly 32 bytes.") }
            material = .asymmetric(try OpenSSLPublicKey.ed25519(x))
        case "oct":
            material = .symmetric(SecretBytes(try bytes("k")))
        default:
            throw OIDCError(.invalidKey, "The key type '\(UntrustedText.sanitized(keyType, limit: 40))' is not supported (RSA, EC, OKP, oct).")
        }
    }

    /// An HMAC key from the client secret (OIDC Core §10.1: the secret's UTF-8 octets).
    package init(hmacSecret: Secret) {
        keyType = "oct"
        keyID = nil
        use = nil
        keyOperations = nil
        algorithm = nil
        curve = nil
        material = .symmetric(SecretBytes(Array(hmacSecret.revealedValue.utf8)))
    }

    /// Whether this key may verify `algorithm`: type and curve match, and `use`, `key_ops` and `alg`
    /// (when present) allow it.
    package func mayVerify(_ algorithm: JWSAlgorithm) -> Bool {
        guard keyType == algorithm.jwkKeyType else { return false }
        if let required = algorithm.jwkCurve, curve != required { return false }
        if let use, use != "sig" { return false }
        if let keyOperations, !keyOperations.contains("verify") { return false }
        if let own = self.algorithm, own != algorithm.rawValue {
            // An Ed25519 key may be labelled with either name of its one algorithm (RFC 9864 §2.2).
            guard algorithm.isEdDSAAlgorithm, own == JWSAlgorithm.edDSA.rawValue || own == JWSAlgorithm.ed25519.rawValue else { return false }
        }
        return true
    }
}

extension JWK: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Type, id, curve and algorithm; never the key material (an `oct` key is a client secret).
    public var description: String {
        var parts = ["kty: \(UntrustedText.sanitized(keyType, limit: 40))"]
        if let keyID { parts.append("kid: \(UntrustedText.sanitized(keyID, limit: 80))") }
        if let curve { parts.append("crv: \(UntrustedText.sanitized(curve, limit: 40))") }
        if let algorithm { parts.append("alg: \(UntrustedText.sanitized(algorithm, limit: 40))") }
        return "JWK(\(parts.joined(separator: ", ")))"
    }

    /// The same as ``description``: never the key material.
    public var debugDescription: String { description }

    /// Type, id, curve and algorithm only, so `dump` and debuggers never show key material.
    public var customMirror: Mirror {
        Mirror(self, children: ["keyType": keyType, "keyID": keyID as Any, "curve": curve as Any, "algorithm": algorithm as Any], displayStyle: .struct)
    }
}

/// Key bytes that are a secret: shown as `<redacted>` by `print`, `dump` and debuggers.
struct SecretBytes: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var description: String { "<redacted>" }
    var debugDescription: String { "<redacted>" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
