public import Foundation

/// The key pair that proves possession of DPoP-bound tokens (RFC 9449): ES256 on P-256 by default,
/// PS256 or EdDSA (Ed25519) when asked, any other asymmetric JWS algorithm when given a key;
/// signed through OpenSSL.
///
/// ```swift
/// let key = try DPoPKey.generate()                       // ES256, a new P-256 key
/// let proof = try key.proof(method: "GET", url: api, accessToken: tokens.accessToken)
/// ```
///
/// A key belongs to one login: ``RelyingParty/dpop`` makes a new one for each login by default,
/// and ``StoredLogin/dpopKey`` keeps it with the tokens it binds (sealed when the store encrypts).
/// Printing a key shows its algorithm and thumbprint, never key material.
public struct DPoPKey: Sendable, Equatable, CustomStringConvertible {
    /// The algorithm of every proof.
    public var algorithm: JWSAlgorithm { signingKey.algorithm }
    /// The RFC 7638 JWK SHA-256 thumbprint of the public key: the `jkt` that binds tokens
    /// (`cnf.jkt`) and codes (`dpop_jkt`).
    public let thumbprint: String
    let signingKey: JWSSigningKey
    /// The base64url JWS header, the same for every proof: `typ`, `alg`, `jwk`.
    private let encodedHeader: String

    /// The key of a `JWSSigningKey` (RSA, EC or Ed25519, with the algorithm it signs).
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` for an HMAC algorithm (a proof needs a public key).
    public init(_ key: JWSSigningKey) throws(OIDCError) {
        guard !key.algorithm.isHMAC else {
            throw OIDCError(.invalidKey, "A DPoP proof is signed with a private key; \(key.algorithm.rawValue) uses a shared secret.")
        }
        // The public JWK holds only the key's public members: no kid, use or alg (RFC 9449 §4.2).
        var jwk = key.publicJWK
        for member in ["kid", "use", "alg"] { jwk[member] = nil }
        let header: [String: JSONValue] = ["typ": "dpop+jwt", "alg": .string(key.algorithm.rawValue), "jwk": .object(jwk)]
        self.signingKey = key
        self.thumbprint = try key.thumbprint()
        self.encodedHeader = Base64URL.encode(Array(JSONValue.object(header).jsonText.utf8))
    }

    /// A key read from PEM (PKCS#8, SEC1 or PKCS#1, unencrypted), as ``JWSSigningKey/init(pem:algorithm:keyID:)``.
    ///
    /// - Throws: ``OIDCError/Code/invalidKey``.
    public init(pem: String, algorithm: JWSAlgorithm? = nil) throws(OIDCError) {
        try self.init(JWSSigningKey(pem: pem, algorithm: algorithm))
    }

    /// A new key: ES256 (P-256) by default; PS256 (RSA 2048), EdDSA (Ed25519), ES384, ES512 or
    /// RS256 when asked.
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` for an HMAC algorithm; ``OIDCError/Code/cryptoFailure``.
    public static func generate(_ algorithm: JWSAlgorithm = .es256) throws(OIDCError) -> DPoPKey {
        try DPoPKey(JWSSigningKey.generate(algorithm))
    }

    /// A DPoP proof (RFC 9449 §4.2) for one request: header `typ` `dpop+jwt`, `alg` and the public
    /// `jwk`; claims `jti` (128 random bits), `htm`, `htu` (the URL without query or fragment),
    /// `iat`, and `ath` (base64url SHA-256 of the access token) and `nonce` when given.
    ///
    /// - Parameters:
    ///   - method: the request's method (`htm`), such as `POST`.
    ///   - url: the request's URL; its query and fragment are left out of `htu`.
    ///   - accessToken: the token the request carries, at a resource server; `nil` at the token
    ///     endpoint.
    ///   - nonce: the server's latest `DPoP-Nonce`, when it gave one.
    ///   - now: the proof's `iat`.
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a URL without scheme or host, or a nonce
    ///   outside RFC 9449's characters; ``OIDCError/Code/cryptoFailure``.
    public func proof(method: String, url: URL, accessToken: Secret? = nil, nonce: String? = nil, now: Date = Date()) throws(OIDCError) -> String {
        var claims: [String: JSONValue] = [
            "jti": .string(try RandomToken.generate(byteCount: 16)), "htm": .string(method),
            "htu": .string(try Self.target(of: url)), "iat": .number(now.timeIntervalSince1970.rounded(.down)),
        ]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(try LibCrypto.sha256(Array(accessToken.revealedValue.utf8)))) }
        if let nonce {
            guard DPoPNonces.isValid(nonce) else {
                throw .invalidArgument("The DPoP nonce is not of RFC 9449's characters (printable ASCII without quote or backslash).")
            }
            claims["nonce"] = .string(nonce)
        }
        let input = encodedHeader + "." + Base64URL.encode(Array(JSONValue.object(claims).jsonText.utf8))
        return input + "." + Base64URL.encode(try signingKey.signature(over: Array(input.utf8)))
    }

    /// `htu`: scheme, authority and path of `url`, without query or fragment (RFC 9449 §4.2).
    static func target(of url: URL) throws(OIDCError) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false), parts.scheme != nil, parts.host != nil else {
            throw .invalidArgument("A DPoP proof needs an absolute URL; \(HTTPErrorMapping.describe(url)) is not one.")
        }
        parts.percentEncodedQuery = nil
        parts.fragment = nil
        parts.user = nil
        parts.password = nil
        guard let target = parts.string else {
            throw .invalidArgument("A DPoP proof needs an absolute URL; \(HTTPErrorMapping.describe(url)) is not one.")
        }
        return target
    }

    /// The private key in PKCS#8 PEM, for the store that keeps it with its login.
    package func privateKeyPEM() throws(OIDCError) -> String { try signingKey.key.pem() }

    /// Two keys are equal when their public keys are (same thumbprint) and they sign with the same algorithm.
    public static func == (lhs: DPoPKey, rhs: DPoPKey) -> Bool {
        lhs.thumbprint == rhs.thumbprint && lhs.algorithm == rhs.algorithm
    }

    /// `DPoPKey(ES256, jkt: …)`: never key material.
    public var description: String { "DPoPKey(\(algorithm.rawValue), jkt: \(thumbprint))" }
}
