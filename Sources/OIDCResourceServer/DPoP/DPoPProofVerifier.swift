public import Foundation
public import OIDC

/// Checks a DPoP proof as RFC 9449 §4.3 asks, except the nonce and the `jti` replay check
/// (``ResourceServer`` adds both; an authorization server's token endpoint can use this alone):
///
/// a compact JWS (strict: no duplicate members, bounded size and nesting, no unknown `crit`);
/// `typ` `dpop+jwt`; an `alg` from ``algorithms`` (asymmetric only); a `jwk` header that is a
/// public key (no private members; `use`, `key_ops` and `alg`, when present, allowing this
/// signature) and verifies the signature; `jti` (at most 256 bytes); `htm` the request's method;
/// `htu` the request's URL, both normalized (RFC 3986 §6.2.2, §6.2.3) and without query and
/// fragment; `iat` neither older than ``maximumAge`` nor in the future, each give or take
/// ``leeway``; with an access token, `ath` its SHA-256 hash.
public struct DPoPProofVerifier: Sendable {
    /// The algorithms a proof may use: asymmetric ones only (HMAC is never accepted).
    public var algorithms: Set<JWSAlgorithm>
    /// How old a proof may be, by its `iat`, in seconds.
    public var maximumAge: TimeInterval
    /// Tolerance for clock differences, in seconds.
    public var leeway: TimeInterval
    /// The longest proof accepted, in bytes.
    public var maximumLength: Int
    private let keys = DPoPKeyCache()

    /// A verifier; proofs up to 60 seconds old (give or take 5 seconds) and 8 KiB long by default.
    public init(
        algorithms: Set<JWSAlgorithm> = ResourceServer.DPoPSettings().algorithms, maximumAge: TimeInterval = 60, leeway: TimeInterval = 5,
        maximumLength: Int = 8_192
    ) {
        self.algorithms = algorithms.filter { !$0.isHMACAlgorithm }
        self.maximumAge = maximumAge
        self.leeway = leeway
        self.maximumLength = maximumLength
    }

    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Checks `proof`, sent with a request of `method` to `url` (as the client addressed it).
    ///
    /// - Parameters:
    ///   - proof: the `DPoP` header's value.
    ///   - method: the request's method, compared with `htm` exactly.
    ///   - url: the request's URL as the client addressed it, absolute.
    ///   - accessToken: the access token sent with the proof, at a resource: `ath` must be its hash.
    ///   - now: the server's clock.
    /// - Throws: ``DPoPProofError`` naming the rule broken.
    public func verify(_ proof: String, method: String, url: String, accessToken: String? = nil, now: Date) throws(DPoPProofError) -> DPoPProof {
        guard proof.utf8.count <= maximumLength else {
            throw DPoPProofError("The DPoP proof is longer than the \(maximumLength) bytes accepted.")
        }
        let jws: ParsedJWS
        do { jws = try ParsedJWS(proof, maximumLength: maximumLength) } catch {
            throw DPoPProofError(
                error.code == .algorithmNotAllowed ? "The DPoP proof's alg is not an accepted asymmetric algorithm." : "The DPoP proof is not a well-formed compact JWS."
            )
        }
        guard let type = jws.type, Self.isProofType(type) else { throw DPoPProofError("The DPoP proof's typ must be dpop+jwt.") }
        guard algorithms.contains(jws.algorithm), !jws.algorithm.isHMACAlgorithm else {
            throw DPoPProofError("The DPoP proof's alg \(jws.algorithm.rawValue) is not one this server accepts.")
        }
        let members: JSONMembers
        do { members = try StrictJSONParser.parseMembers(jws.payload, maximumDepth: 8) } catch {
            throw DPoPProofError("The DPoP proof's claims are not a valid JSON object.")
        }
        // The claims first: checking them costs less than the signature, so junk is turned away cheaply.
        var jti: String?, htm: String?, htu: String?, iat: Double?, ath: String?, nonce: String?
        for position in members.names.indices {
            let value = members.values[position]
            switch members.fingerprints[position] {
            case Claim.jti: jti = try Self.string(value, "jti")
            case Claim.htm: htm = try Self.string(value, "htm")
            case Claim.htu: htu = try Self.string(value, "htu")
            case Claim.ath: ath = try Self.string(value, "ath")
            case Claim.nonce: nonce = try Self.string(value, "nonce")
            case Claim.iat:
                guard let seconds = NumericDate.seconds(value) else { throw DPoPProofError("The DPoP proof's iat \(NumericDate.rule).") }
                iat = seconds
            default: break
            }
        }
        guard let jti, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw DPoPProofError("The DPoP proof needs a jti of 1 to 256 bytes.")
        }
        guard let htm else { throw DPoPProofError("The DPoP proof has no htm.") }
        guard htm == method else { throw DPoPProofError("The DPoP proof's htm is not this request's method.") }
        guard let htu else { throw DPoPProofError("The DPoP proof has no htu.") }
        guard let presented = TargetURI.normalized(htu), let expected = TargetURI.normalized(url), presented == expected else {
            throw DPoPProofError("The DPoP proof's htu is not this request's URL.")
        }
        guard let iat else { throw DPoPProofError("The DPoP proof has no iat.") }
        let clock = now.timeIntervalSince1970
        guard iat <= clock + leeway else { throw DPoPProofError("The DPoP proof's iat is in the future.") }
        guard iat >= clock - maximumAge - leeway else {
            throw DPoPProofError("The DPoP proof is too old: its iat is more than \(Int(maximumAge + leeway)) seconds ago.")
        }
        let thumbprint = try verifySignature(jws)
        let verified = DPoPProof(
            thumbprint: thumbprint, algorithm: jws.algorithm, identifier: jti, issuedAt: Date(timeIntervalSince1970: iat), nonce: nonce,
            accessTokenHash: ath, rememberUntil: Date(timeIntervalSince1970: iat + maximumAge + 2 * leeway), members: members
        )
        if let accessToken { try verified.checkAccessToken(accessToken) }
        return verified
    }

    /// Checks `proof`, sent with a request of `method` to `url`.
    ///
    /// - Parameters:
    ///   - proof: the `DPoP` header's value.
    ///   - method: the request's method, compared with `htm` exactly.
    ///   - url: the request's URL as the client addressed it.
    ///   - accessToken: the access token sent with the proof, at a resource: `ath` must be its hash.
    ///   - now: the server's clock.
    /// - Throws: ``DPoPProofError`` naming the rule broken.
    public func verify(_ proof: String, method: String, url: URL, accessToken: String? = nil, now: Date) throws(DPoPProofError) -> DPoPProof {
        try verify(proof, method: method, url: url.absoluteString, accessToken: accessToken, now: now)
    }

    /// The `jwk` header checked and used; returns its thumbprint.
    private func verifySignature(_ jws: ParsedJWS) throws(DPoPProofError) -> String {
        guard let members = jws.header["jwk"]?.objectValue else { throw DPoPProofError("The DPoP proof's header has no jwk object.") }
        guard Self.privateMembers.isDisjoint(with: members.keys) else {
            throw DPoPProofError("The DPoP proof's jwk holds private key material; only the public key belongs there.")
        }
        if let use = members["use"], use.stringValue != "sig" { throw DPoPProofError("The DPoP proof's jwk is not for signatures (use).") }
        if let operations = members["key_ops"], !(operations.arrayValue?.contains(.string("verify")) ?? false) {
            throw DPoPProofError("The DPoP proof's jwk does not allow verify (key_ops).")
        }
        if let alg = members["alg"], alg.stringValue != jws.algorithm.rawValue {
            throw DPoPProofError("The DPoP proof's jwk is for another algorithm than the proof's alg.")
        }
        guard let thumbprint = KeyThumbprint.of(members) else {
            throw DPoPProofError("The DPoP proof's jwk is not an RSA, EC or OKP public key.")
        }
        do throws(OIDCError) {
            let key = try keys.key(thumbprint: thumbprint, members: members)
            guard key.mayVerify(jws.algorithm) else { throw OIDCError(.invalidKey, "") }
            try jws.verifySignature(with: key)
        } catch {
            throw DPoPProofError(
                error.code == .invalidSignature ? "The DPoP proof's signature does not verify with its jwk." : "The DPoP proof's jwk cannot verify its alg."
            )
        }
        return thumbprint
    }

    /// `dpop+jwt`, case-insensitively, with or without `application/` (RFC 7515 §4.1.9).
    static func isProofType(_ type: String) -> Bool {
        var media = Substring(type)
        if media.utf8.count > 12, Credentials.equalsIgnoringCase(media.prefix(12), "application/") { media = media.dropFirst(12) }
        return Credentials.equalsIgnoringCase(media, "dpop+jwt")
    }

    private static func string(_ value: JSONValue, _ name: String) throws(DPoPProofError) -> String {
        guard case .string(let text) = value else { throw DPoPProofError("The DPoP proof's \(name) must be a string.") }
        return text
    }

    private enum Claim {
        static let jti = JSONMembers.fingerprint("jti")
        static let htm = JSONMembers.fingerprint("htm")
        static let htu = JSONMembers.fingerprint("htu")
        static let iat = JSONMembers.fingerprint("iat")
        static let ath = JSONMembers.fingerprint("ath")
        static let nonce = JSONMembers.fingerprint("nonce")
    }
}
