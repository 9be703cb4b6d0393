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
/// A key belongs to one login: ``RelyingParty/Configuration/dpop`` makes a new one for each login by default,
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
    private let encodedHeader: [UInt8]
    /// The last access token's `ath`, shared by copies of this key.
    private let accessTokenHash = DPoPAccessTokenHash()

    /// The key of a `JWSSigningKey` (RSA, EC or Ed25519, with the algorithm it signs).
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` for an HMAC algorithm (a proof needs a public key).
    public init(_ key: JWSSigningKey) throws(OIDCError) {
        guard !key.algorithm.isHMACAlgorithm else {
            throw OIDCError(.invalidKey, "A DPoP proof is signed with a private key; \(key.algorithm.rawValue) uses a shared secret.")
        }
        // The public JWK holds only the key's public members: no kid, use or alg (RFC 9449 §4.2).
        var jwk = key.publicJWK
        for member in ["kid", "use", "alg"] { jwk[member] = nil }
        let header: [String: JSONValue] = ["typ": "dpop+jwt", "alg": .string(key.algorithm.rawValue), "jwk": .object(jwk)]
        self.signingKey = key
        self.thumbprint = try key.thumbprint()
        self.encodedHeader = Array(Base64URLEncoding.encode(Array(JSONValue.object(header).jsonText.utf8)).utf8)
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
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        guard issuedAt.isFinite, abs(issuedAt) < 9_007_199_254_740_992 else {
            throw .invalidArgument("A DPoP proof's iat must be a date in whole seconds since 1970; \(now.timeIntervalSince1970) is not one.")
        }
        // The claims straight to bytes: a proof is made for every request, so no dictionary, no
        // sorting and no intermediate strings (`oidc-bench --dpop` measures it beside a bare signature).
        var claims = JSONObjectBytes()
        claims.add("jti", try RandomToken.generate(byteCount: 16))
        claims.add("htm", method)
        claims.add("htu", try Self.target(of: url))
        claims.add("iat", Int64(issuedAt))
        if let accessToken {
            claims.add("ath", try accessTokenHash.hash(of: accessToken.revealedValue))
        }
        if let nonce {
            guard DPoPNonces.isValid(nonce) else {
                throw .invalidArgument("The DPoP nonce is not of RFC 9449's characters (printable ASCII without quote or backslash).")
            }
            claims.add("nonce", nonce)
        }
        let payload = claims.closed()
        var jws = encodedHeader
        // Room for the signature too: 86 characters for ES256, up to 683 for RSA 4096.
        jws.reserveCapacity(encodedHeader.count + payload.count * 4 / 3 + 690)
        jws.append(UInt8(ascii: "."))
        payload.withUnsafeBufferPointer { Base64URLEncoding.append($0, to: &jws) }
        let signature = try signingKey.signature(over: jws)
        jws.append(UInt8(ascii: "."))
        signature.withUnsafeBufferPointer { Base64URLEncoding.append($0, to: &jws) }
        return String(decoding: jws, as: UTF8.self)
    }

    /// `htu`: scheme, authority and path of `url`, without query, fragment or user information
    /// (RFC 9449 §4.2), cut from the URL's text as it is (no re-encoding).
    static func target(of url: URL) throws(OIDCError) -> String {
        let text = Array(url.absoluteString.utf8)
        // scheme "://" authority path ["?" query] ["#" fragment]; scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")), colon > 0, (0x61...0x7A).contains(text[0] | 0x20),
            text[..<colon].allSatisfy({ (0x61...0x7A).contains($0 | 0x20) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }),
            text.count >= colon + 3, text[colon + 1] == UInt8(ascii: "/"), text[colon + 2] == UInt8(ascii: "/")
        else {
            throw .invalidArgument("A DPoP proof needs an absolute URL; \(HTTPErrorMapping.describe(url)) is not one.")
        }
        let authorityStart = colon + 3
        let end = text[authorityStart...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? text.count
        let authorityEnd = text[authorityStart..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
        let hostStart = text[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? authorityStart
        guard hostStart < authorityEnd, text[hostStart] != UInt8(ascii: ":") else {
            throw .invalidArgument("A DPoP proof needs an absolute URL; \(HTTPErrorMapping.describe(url)) is not one.")
        }
        return String(decoding: text[..<authorityStart] + text[hostStart..<end], as: UTF8.self)
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
