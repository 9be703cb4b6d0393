internal import Foundation

/// A private key that signs JWS in compact form: the client assertions of `private_key_jwt`
/// (RFC 7523, ``ClientAuthentication/privateKeyJWT(_:)``). RS256/384/512 and PS256/384/512 with an
/// RSA key of 2048 bits or more, ES256/384/512 with a P-256/P-384/P-521 key, EdDSA with Ed25519;
/// signed through OpenSSL.
///
/// ```swift
/// let key = try JWSSigningKey(contentsOfFile: "/etc/my-daemon/client-key.pem", keyID: "key-2026")
/// let rp = RelyingParty(provider: provider, clientID: "my-daemon", authentication: .privateKeyJWT(key))
/// ```
///
/// Printing a key shows its algorithm and key id, never key material.
public struct JWSSigningKey: Sendable, CustomStringConvertible {
    /// The algorithm every signature of this key uses.
    public let algorithm: JWSAlgorithm
    /// The `kid` put in the JWS header: the one given, else the JWK's own, else the key's RFC 7638
    /// JWK SHA-256 thumbprint (``thumbprint()``), since servers that look keys up by `kid` (glewlwyd)
    /// refuse an assertion without one. Register the public key with the same `kid`
    /// (``publicJWK`` carries it).
    public let keyID: String?
    let key: OpenSSLPrivateKey

    /// A key from PEM: PKCS#8 (`PRIVATE KEY`), SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`),
    /// unencrypted.
    ///
    /// - Parameters:
    ///   - pem: the PEM text.
    ///   - algorithm: the algorithm; by default RS256 for RSA, ES256/384/512 for the EC curve, EdDSA
    ///     for Ed25519.
    ///   - keyID: the `kid` for the JWS header; the key's RFC 7638 thumbprint by default.
    /// - Throws: ``OIDCError/Code/invalidKey`` for text that is not a private key, a key type or size
    ///   the algorithm does not allow (RSA under 2048 bits), or an HMAC algorithm.
    public init(pem: String, algorithm: JWSAlgorithm? = nil, keyID: String? = nil) throws(OIDCError) {
        try self.init(key: try OpenSSLPrivateKey(pem: pem), algorithm: algorithm, keyID: keyID)
    }

    /// A key from a private JWK (RFC 7517): `kty` RSA (with `d`, and the CRT members when present),
    /// EC (with `d`) or OKP Ed25519 (with `d`). Its `kid` and `alg` are used unless given here; with
    /// neither, the `kid` is the key's RFC 7638 thumbprint.
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` for JSON that is not a private JWK, parts that do not
    ///   make one key pair, or a key the algorithm does not allow.
    public init(jwk json: String, algorithm: JWSAlgorithm? = nil, keyID: String? = nil) throws(OIDCError) {
        let members: [String: JSONValue]
        do { members = try StrictJSONParser.parseObject(Array(json.utf8)) } catch {
            throw OIDCError(.invalidKey, "The private JWK is not a JSON object (\(error)).")
        }
        var chosen = algorithm
        if chosen == nil, let name = members["alg"]?.stringValue {
            guard let named = JWSAlgorithm(rawValue: name) else {
                throw OIDCError(.invalidKey, "The private JWK's alg '\(UntrustedText.sanitized(name, limit: 32))' is not one this library signs with.")
            }
            chosen = named
        }
        try self.init(key: try OpenSSLPrivateKey(jwk: members), algorithm: chosen, keyID: keyID ?? members["kid"]?.stringValue)
    }

    /// A key read from a file holding PEM or a private JWK, as the file store reads its files: a
    /// regular file of this user that no other user can read or write, 64 KiB at most.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when there is no such file;
    ///   ``OIDCError/Code/storageFailure`` for a file that is a link, is not yours (or root's), or
    ///   that others can read (the message says to `chmod 600` it); what the PEM and JWK initializers
    ///   throw.
    public init(contentsOfFile path: String, algorithm: JWSAlgorithm? = nil, keyID: String? = nil) throws(OIDCError) {
        guard var bytes = try PrivateFile.readSecret(path, limit: 64 * 1024) else {
            throw OIDCError(.invalidArgument, "There is no private key file at \(path).", context: ["path": path])
        }
        defer { LibCrypto.cleanse(&bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.drop(while: \.isWhitespace).hasPrefix("{") {
            try self.init(jwk: text, algorithm: algorithm, keyID: keyID)
        } else {
            try self.init(pem: text, algorithm: algorithm, keyID: keyID)
        }
    }

    /// A new key for `algorithm`: RSA 2048 bits, the EC curve of the algorithm, or Ed25519.
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` for an HMAC algorithm; ``OIDCError/Code/cryptoFailure``.
    public static func generate(_ algorithm: JWSAlgorithm, keyID: String? = nil) throws(OIDCError) -> JWSSigningKey {
        let kind: OpenSSLPrivateKey.Kind
        switch algorithm.jwkKeyType {
        case "RSA": kind = .rsa(bits: 2048)
        case "EC": kind = .ec(curve: algorithm == .es256 ? "P-256" : algorithm == .es384 ? "P-384" : "P-521")
        case "OKP": kind = .ed25519
        default: throw OIDCError(.invalidKey, "\(algorithm.rawValue) signs with a shared secret, not a private key.")
        }
        return try JWSSigningKey(key: try OpenSSLPrivateKey.generate(kind), algorithm: algorithm, keyID: keyID)
    }

    init(key: OpenSSLPrivateKey, algorithm: JWSAlgorithm?, keyID: String?) throws(OIDCError) {
        guard let type = key.keyType else { throw OIDCError(.invalidKey, "Only RSA, EC and Ed25519 private keys sign JWS here.") }
        let curve = try key.publicJWKMembers()["crv"]
        let chosen: JWSAlgorithm
        if let algorithm {
            chosen = algorithm
        } else {
            switch type {
            case "RSA": chosen = .rs256
            case "EC": chosen = curve == "P-384" ? .es384 : curve == "P-521" ? .es512 : .es256
            default: chosen = .edDSA
            }
        }
        guard !chosen.isHMACAlgorithm else { throw OIDCError(.invalidKey, "\(chosen.rawValue) signs with a shared secret, not a private key.") }
        guard chosen.jwkKeyType == type, chosen.jwkCurve == nil || chosen.jwkCurve == curve else {
            throw OIDCError(.invalidKey, "A \(curve ?? type) key cannot sign \(chosen.rawValue).", context: ["alg": chosen.rawValue])
        }
        if type == "RSA", key.bits < 2048 {
            throw OIDCError(.invalidKey, "The RSA key has \(key.bits) bits; at least 2048 are required.")
        }
        self.key = key
        self.algorithm = chosen
        if let keyID { self.keyID = keyID } else { self.keyID = try Self.thumbprint(of: key) }
    }

    /// The public key as a JWK: `kty` and its public members, with `kid` (when there is one), `alg`
    /// and `use: sig`. Publish it (in your client's registered JWKS), never the private key.
    public var publicJWK: [String: JSONValue] {
        var members = ((try? key.publicJWKMembers()) ?? [:]).mapValues { JSONValue.string($0) }
        members["alg"] = .string(algorithm.rawValue)
        members["use"] = "sig"
        if let keyID { members["kid"] = .string(keyID) }
        return members
    }

    /// A JWKS document (`{"keys": [...]}`) of the public keys of `keys`: what a client registers
    /// with its provider, pasted or served at its `jwks_uri`.
    public static func publicJWKSet(_ keys: [JWSSigningKey]) -> String {
        JSONValue.object(["keys": .array(keys.map { .object($0.publicJWK) })]).jsonText
    }

    /// The RFC 7638 thumbprint of the public key: base64url of the SHA-256 of its required members.
    public func thumbprint() throws(OIDCError) -> String {
        try Self.thumbprint(of: key)
    }

    private static func thumbprint(of key: OpenSSLPrivateKey) throws(OIDCError) -> String {
        let members = try key.publicJWKMembers()
        let required: [String] = switch members["kty"] {
        case "RSA": ["e", "kty", "n"]
        case "EC": ["crv", "kty", "x", "y"]
        default: ["crv", "kty", "x"]
        }
        var canonical: [String: JSONValue] = [:]
        for name in required { canonical[name] = members[name].map { .string($0) } }
        return Base64URLEncoding.encode(try LibCrypto.sha256(Array(JSONValue.object(canonical).jsonText.utf8)))
    }

    /// A compact JWS over `claims`: the header holds `alg`, `kid` (``keyID``), `typ` (when given)
    /// and `extraHeader`'s members.
    public func sign(claims: [String: JSONValue], type: String? = nil, extraHeader: [String: JSONValue] = [:]) throws(OIDCError) -> String {
        var header = extraHeader
        header["alg"] = .string(algorithm.rawValue)
        if let keyID { header["kid"] = .string(keyID) }
        if let type { header["typ"] = .string(type) }
        let input = Base64URLEncoding.encode(Array(JSONValue.object(header).jsonText.utf8)) + "."
            + Base64URLEncoding.encode(Array(JSONValue.object(claims).jsonText.utf8))
        return input + "." + Base64URLEncoding.encode(try key.sign(Array(input.utf8), algorithm: algorithm))
    }

    /// The signature of `input` (a JWS signing input) with this key's algorithm: for conformance
    /// vectors, whose header bytes are given.
    package func signature(over input: [UInt8]) throws(OIDCError) -> [UInt8] {
        try key.sign(input, algorithm: algorithm)
    }

    /// `JWSSigningKey(ES256, kid: …)`: never key material.
    public var description: String { "JWSSigningKey(\(algorithm.rawValue)\(keyID.map { ", kid: \($0)" } ?? ""))" }
}
