public import Foundation
public import OIDC

/// Verifies logout tokens as OIDC Back-Channel Logout 1.0 §2.6 requires, for a server that keeps
/// its users' logins and receives the provider's back-channel logout requests.
///
/// ```swift
/// let verifier = LogoutTokenVerifier(issuer: "https://idp.example", clientID: "my-app", replayStore: InMemoryReplayStore())
/// let token = try await verifier.verify(logoutToken, keys: jwksCache)
/// _ = try await store.deleteLogins(token.selector(clientID: "my-app"))
/// ```
///
/// In order: a compact JWS of at most ``maximumTokenLength`` bytes (no `crit`, never `none`, a
/// JWE is refused); `alg` among ``allowedAlgorithms`` (asymmetric only); `typ`, when present,
/// `logout+jwt` (RFC 8725 §3.11: no other kind of JWT passes as a logout token); the signature
/// with the issuer's key; `iss` exactly ``issuer``; `aud` containing ``clientID``; `iat` not in the
/// future beyond ``leeway`` and not older than ``maximumAge``; `exp`, when present, not passed
/// beyond ``leeway`` (not required: glewlwyd 2.7 sends none); `events` a JSON object whose member
/// `http://schemas.openid.net/event/backchannel-logout` is a JSON object; `sub`, `sid` or both,
/// non-empty strings; no `nonce`; `jti` a non-empty string, then claimed in ``replayStore``
/// under the issuer, so the same token is accepted once (across a fleet with a shared store).
/// The claim comes last: a token refused for another rule does not use up its `jti`.
public struct LogoutTokenVerifier: Sendable {
    /// The expected issuer: `iss` must equal it exactly.
    public var issuer: String
    /// This client's id: `aud` must contain it.
    public var clientID: String
    /// Where accepted `jti`s are remembered; shared by every instance that receives logout tokens.
    public var replayStore: any ReplayStore
    /// Accepted algorithms: the asymmetric ones by default. A symmetric algorithm is refused even
    /// when listed here: a logout request comes from the network, unauthenticated but for the
    /// provider's signature.
    public var allowedAlgorithms: Set<JWSAlgorithm> = JWSAlgorithm.asymmetric
    /// Tolerance for clock differences on `iat` and `exp`: 60 s by default.
    public var leeway: TimeInterval = 60
    /// The oldest `iat` accepted: 10 minutes by default. A provider sends its logout token at the
    /// moment of the logout; an older one is refused, which is also how long its `jti` must be
    /// remembered when it has no `exp`.
    public var maximumAge: TimeInterval = 600
    /// Also accept the generic `typ` values `JWT` and `JOSE` (off by default): for providers that
    /// type every JWT they sign so (glewlwyd 2.7 types its logout tokens `JWT`, like its ID tokens;
    /// the specification recommends `logout+jwt`). The `events` member and the absent `nonce` still
    /// keep an ID token from passing as a logout token.
    public var acceptsGenericType = false
    /// Bound on the token's length: 64 KiB by default.
    public var maximumTokenLength = ParsedJWS.defaultMaximumLength

    /// A verifier for logout tokens of `issuer` meant for `clientID`, remembering their `jti`s in
    /// `replayStore`.
    public init(issuer: String, clientID: String, replayStore: any ReplayStore) {
        self.issuer = issuer
        self.clientID = clientID
        self.replayStore = replayStore
    }

    /// Verifies `token` with a key from `keys` at the time `now`, then records its `jti`.
    ///
    /// - Throws: ``LogoutTokenError`` naming the rule that failed.
    public func verify(_ token: String, keys: JWKSet, now: Date = Date()) async throws(LogoutTokenError) -> LogoutToken {
        let verified = try verifyWithoutReplayCheck(token, keys: keys, now: now)
        try await claim(verified, now: now)
        return verified
    }

    /// Verifies `token` with the issuer's keys from `cache` (refetched once, within the cache's
    /// limits, when the token names a key the cached set lacks), then records its `jti`.
    ///
    /// - Throws: ``LogoutTokenError`` naming the rule that failed; ``LogoutTokenError/Rule/unavailable``
    ///   when the keys cannot be fetched.
    public func verify(_ token: String, keys cache: JWKSCache, now: Date = Date()) async throws(LogoutTokenError) -> LogoutToken {
        let verified: LogoutToken
        do throws(OIDCError) {
            verified = try await cache.verifyRefetchingOnce("Logout token") { keys throws(OIDCError) in
                do throws(LogoutTokenError) { return try verifyWithoutReplayCheck(token, keys: keys, now: now) } catch { throw Self.carried(error) }
            }
        } catch {
            throw Self.uncarried(error)
        }
        try await claim(verified, now: now)
        return verified
    }

    /// Every rule but the replay check: for a caller that keeps its own record of `jti`s.
    ///
    /// - Throws: ``LogoutTokenError`` naming the rule that failed.
    public func verifyWithoutReplayCheck(_ token: String, keys: JWKSet, now: Date = Date()) throws(LogoutTokenError) -> LogoutToken {
        guard leeway.isFinite, leeway >= 0, maximumAge.isFinite, maximumAge > 0, now.timeIntervalSince1970.isFinite else {
            throw LogoutTokenError(.issuedAt, "The verifier's leeway and maximum age must be finite, not negative, and the age positive.")
        }
        let jws: ParsedJWS
        do { jws = try ParsedJWS(token, maximumLength: maximumTokenLength) } catch { throw Self.translated(error) }
        guard allowedAlgorithms.contains(jws.algorithm), !jws.algorithm.isHMACAlgorithm else {
            throw LogoutTokenError(
                .algorithm, "The token is signed with \(jws.algorithm.rawValue), which is not an allowed asymmetric algorithm.")
        }
        try checkType(jws.type)
        do {
            let key = try keys.key(for: jws.algorithm, keyID: jws.keyID)
            try jws.verifySignature(with: key)
        } catch {
            throw Self.translated(error)
        }
        let claims: [String: JSONValue]
        do { claims = try StrictJSONParser.parseObject(jws.payload, maximumDepth: 16) } catch {
            throw LogoutTokenError(.malformed, "The claims are not a valid JSON object (\(error)).")
        }
        return try LogoutTokenClaims.check(claims, verifier: self, jws: jws, now: now.timeIntervalSince1970)
    }

    /// `typ`, when present: `logout+jwt` (or `application/logout+jwt`, in any case), and with
    /// ``acceptsGenericType`` also `JWT` or `JOSE`.
    private func checkType(_ type: String?) throws(LogoutTokenError) {
        guard let type else { return }
        var media = type.lowercased()
        if media.hasPrefix("application/") { media.removeFirst("application/".count) }
        if media == "logout+jwt" { return }
        if acceptsGenericType, media == "jwt" || media == "jose" { return }
        throw LogoutTokenError(
            .type,
            "The token is typed '\(UntrustedText.sanitized(type, limit: 40))', not 'logout+jwt': another kind of JWT is never accepted as a logout token (RFC 8725 §3.11)."
        )
    }

    /// Records the token's `jti` under its issuer until it would be refused for its age anyway,
    /// with one more ``leeway`` of margin (as a DPoP proof's record has): the token is accepted up
    /// to `iat + maximumAge + leeway` (or `exp + leeway`) inclusive by the clock `now`, which the
    /// store compares the record's expiry with.
    private func claim(_ token: LogoutToken, now: Date) async throws(LogoutTokenError) {
        let first: Bool
        do { first = try await replayStore.claim(Self.replayIdentifier(of: token), until: rememberUntil(token), now: now) } catch {
            throw LogoutTokenError(.unavailable, "The replay store could not record the token's jti (\(error)); it was refused, not let through.")
        }
        guard first else {
            throw LogoutTokenError(.replayed, "A logout token with this jti from this issuer was accepted before: a replay.")
        }
    }

    /// Until when the replay store remembers `token`'s `jti`: a leeway after the last moment it
    /// is accepted, `iat + maximumAge + 2 × leeway` (or `exp + 2 × leeway`, when later).
    func rememberUntil(_ token: LogoutToken) -> Date {
        var until = token.issuedAt.addingTimeInterval(maximumAge + 2 * leeway)
        if let expiresAt = token.expiresAt { until = max(until, expiresAt.addingTimeInterval(2 * leeway)) }
        return until
    }

    /// Forgets that `token` was accepted, so that the provider's retry of it is taken: for a
    /// logout whose logins could not be deleted. Best effort: a store that cannot forget keeps it.
    public func release(_ token: LogoutToken) async {
        try? await replayStore.release(Self.replayIdentifier(of: token))
    }

    /// What the replay store records for `token`: its `jti`, scoped by its issuer.
    private static func replayIdentifier(of token: LogoutToken) -> String {
        "logout-token\u{0}\(token.issuer)\u{0}\(token.tokenID)"
    }

    /// A ``LogoutTokenError`` carried through the cache's `OIDCError`-typed closure.
    private static func carried(_ error: LogoutTokenError) -> OIDCError {
        if error.rule == .key { return OIDCError(.keyNotFound, error.message) }
        return OIDCError(.malformedToken, error.message, context: ["logoutTokenRule": error.rule.rawValue])
    }

    private static func uncarried(_ error: OIDCError) -> LogoutTokenError {
        if let rule = error.context["logoutTokenRule"].flatMap(LogoutTokenError.Rule.init(rawValue:)) { return LogoutTokenError(rule, error.message) }
        if error.code == .keyNotFound { return LogoutTokenError(.key, error.message) }
        return LogoutTokenError(.unavailable, "The issuer's keys could not be fetched (\(error.code)): \(error.message)")
    }

    /// The rule an `OIDCError` of the JOSE layer broke.
    private static func translated(_ error: OIDCError) -> LogoutTokenError {
        switch error.code {
        case .algorithmNotAllowed: LogoutTokenError(.algorithm, error.message)
        case .keyNotFound, .ambiguousKey, .invalidKey: LogoutTokenError(.key, error.message)
        case .invalidSignature, .cryptoFailure: LogoutTokenError(.signature, error.message)
        default: LogoutTokenError(.malformed, error.message)
        }
    }
}
