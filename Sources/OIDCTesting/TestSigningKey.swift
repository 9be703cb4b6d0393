internal import Foundation
public import OIDC

/// A private key for signing test tokens with any JWS algorithm the verifier supports, including
/// PS256/384/512 and EdDSA, which libjwt 1.10 cannot sign. Backed by OpenSSL.
///
/// ```swift
/// let key = try TestSigningKey.generate(.es256, keyID: "k1")
/// let jwks = try JWKSet(json: key.jwksJSON)
/// let token = try key.sign(claims: ["iss": "https://idp.test", "sub": "u1", "aud": "app", "exp": 2_000_000_000, "iat": 1_700_000_000])
/// ```
public struct TestSigningKey: Sendable {
    /// The algorithm the key signs with: the header's `alg`.
    public let algorithm: JWSAlgorithm
    /// The `kid` of the header and the public JWK, if any.
    public let keyID: String?
    private let key: OpenSSLPrivateKey

    /// A fresh key for `algorithm`: RSA 2048 bits for RS*/PS*, the matching NIST curve for ES*,
    /// Ed25519 for EdDSA.
    public static func generate(_ algorithm: JWSAlgorithm, keyID: String? = nil, rsaBits: Int = 2048) throws -> TestSigningKey {
        let kind: OpenSSLPrivateKey.Kind
        switch algorithm.jwkKeyType {
        case "RSA": kind = .rsa(bits: rsaBits)
        case "EC": kind = .ec(curve: algorithm.jwkCurve ?? "P-256")
        case "OKP": kind = .ed25519
        default: throw OIDCError(.invalidArgument, "HMAC tokens need a secret, not a signing key; use TokenMinter.")
        }
        return TestSigningKey(algorithm: algorithm, keyID: keyID, key: try OpenSSLPrivateKey.generate(kind))
    }

    /// The same key material under another `kid`.
    func withKeyID(_ keyID: String?) -> TestSigningKey { TestSigningKey(algorithm: algorithm, keyID: keyID, key: key) }

    /// A key read from PEM.
    public init(pem: String, algorithm: JWSAlgorithm, keyID: String? = nil) throws {
        self.init(algorithm: algorithm, keyID: keyID, key: try OpenSSLPrivateKey(pem: pem))
    }

    private init(algorithm: JWSAlgorithm, keyID: String?, key: OpenSSLPrivateKey) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.key = key
    }

    /// The private key as PKCS#8 PEM (for ``TokenMinter``, which is libjwt).
    public func pem() throws -> String { try key.pem() }

    /// The public key as DER SubjectPublicKeyInfo (PEM without the armour).
    public func publicKeyDER() throws -> [UInt8] { try key.publicKeyDER() }

    /// The public JWK members, with `kid`, `alg` and `use: sig` unless told otherwise.
    public func publicJWK(extra: [String: Any] = [:], includeAlgorithm: Bool = true) throws -> [String: Any] {
        var members: [String: Any] = try key.publicJWKMembers()
        if let keyID { members["kid"] = keyID }
        if includeAlgorithm { members["alg"] = algorithm.rawValue }
        members["use"] = "sig"
        members.merge(extra) { _, new in new }
        return members
    }

    /// `{"keys": [publicJWK]}` as JSON text.
    public var jwksJSON: String {
        get throws { try Self.json(["keys": [try publicJWK()]]) }
    }

    /// Signs the claims with a header of `alg`, `typ: JWT`, `kid` (when set) and `extraHeader`.
    public func sign(claims: [String: Any], extraHeader: [String: Any] = [:]) throws -> String {
        var header: [String: Any] = ["alg": algorithm.rawValue, "typ": "JWT"]
        if let keyID { header["kid"] = keyID }
        header.merge(extraHeader) { _, new in new }
        return try sign(headerJSON: try Self.json(header), payloadJSON: try Self.json(claims))
    }

    /// Signs exactly these header and payload texts (for malformed-input tests: duplicate members,
    /// odd `alg` values, `crit`, …). The signature uses this key's ``algorithm``.
    public func sign(headerJSON: String, payloadJSON: String) throws -> String {
        let signingInput = Base64URLEncoding.encode(Array(headerJSON.utf8)) + "." + Base64URLEncoding.encode(Array(payloadJSON.utf8))
        let signature = try key.sign(Array(signingInput.utf8), algorithm: algorithm)
        return signingInput + "." + Base64URLEncoding.encode(signature)
    }

    static func json(_ object: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
