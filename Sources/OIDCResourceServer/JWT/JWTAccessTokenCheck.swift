internal import Foundation
internal import OIDC

/// RFC 9068 §4's validation of a JWT access token, in one pass: the token is split and its header
/// and claims parsed once (strictly), the issuer found by its exact `iss`, the signature verified
/// with a key of that issuer's JWKS, then every claim rule.
struct JWTAccessTokenCheck: Sendable {
    let issuers: [String: IssuerKeys]
    let algorithms: Set<JWSAlgorithm>
    let audiences: Set<String>
    let acceptsUntypedTokens: Bool
    let requiredClaims: Set<String>
    let leeway: TimeInterval
    let maximumLength: Int

    func verify(_ token: String, now: Date) async throws(Denial) -> TokenFacts {
        let jws: ParsedJWS
        do { jws = try ParsedJWS(token, maximumLength: maximumLength) } catch {
            if error.code == .algorithmNotAllowed {
                throw .invalidToken(.algorithmNotAllowed, "The access token is unsigned or uses an algorithm this resource does not accept.")
            }
            if ParsedJWS.refusedCriticalHeader(error) {
                throw .invalidToken(
                    .unsupportedCriticalHeader, "The access token requires a JWS extension (crit) this resource does not implement (RFC 7515 §4.1.11)."
                )
            }
            if ParsedJWS.refusedHeaderJSON(error) {
                throw .invalidToken(
                    .malformedToken, "The access token's header is not a strict JSON object (a member given twice, bad UTF-8 or not JSON; RFC 7515 §5.2)."
                )
            }
            throw .invalidToken(.malformedToken, "The access token is not a well-formed JWT.")
        }
        guard algorithms.contains(jws.algorithm), !jws.algorithm.isHMACAlgorithm else {
            throw .invalidToken(.algorithmNotAllowed, "The access token's algorithm \(jws.algorithm.rawValue) is not accepted here.")
        }
        try checkType(jws.type)
        let claims = try AccessTokenClaims(payload: jws.payload)
        guard let issuerKeys = issuers[claims.issuer] else {
            throw .invalidToken(.untrustedIssuer, "The access token was issued by an authorization server this resource does not trust.")
        }
        try await verifySignature(jws, with: issuerKeys, now: now)
        try validate(claims, typed: jws.type != nil && !Self.isGenericType(jws.type!), now: now)
        return TokenFacts(
            subject: claims.subject, clientID: claims.clientID, scopes: claims.scopes, issuer: claims.issuer, audience: claims.audience,
            expiresAt: Date(timeIntervalSince1970: claims.expiresAt), issuedAt: claims.issuedAt.map { Date(timeIntervalSince1970: $0) },
            tokenID: claims.tokenID, keyThumbprint: claims.keyThumbprint, certificateThumbprint: claims.certificateThumbprint,
            source: .jwt(algorithm: jws.algorithm, keyID: jws.keyID), claims: .members(claims.members)
        )
    }

    /// RFC 9068 §4: `typ` must be `at+jwt` (`application/at+jwt`), case-insensitively. With
    /// ``ResourceServer/Configuration/acceptsUntypedTokens``, no `typ` or the generic `JWT` too;
    /// any other type is another kind of JWT (RFC 8725 §3.11).
    private func checkType(_ type: String?) throws(Denial) {
        guard let type else {
            guard acceptsUntypedTokens else {
                throw .invalidToken(.untypedToken, "The access token has no typ; this resource takes at+jwt access tokens (RFC 9068).")
            }
            return
        }
        var media = Substring(type)
        if media.utf8.count > 12, Credentials.equalsIgnoringCase(media.prefix(12), "application/") { media = media.dropFirst(12) }
        if Credentials.equalsIgnoringCase(media, "at+jwt") { return }
        if Self.isGenericType(type) {
            guard acceptsUntypedTokens else {
                throw .invalidToken(.untypedToken, "The access token is typed JWT, not at+jwt (RFC 9068); this resource takes typed access tokens only.")
            }
            return
        }
        throw .invalidToken(.wrongTokenType, "The token is another kind of JWT than an access token (its typ is not at+jwt; RFC 8725 §3.11).")
    }

    static func isGenericType(_ type: String) -> Bool {
        var media = Substring(type)
        if media.utf8.count > 12, Credentials.equalsIgnoringCase(media.prefix(12), "application/") { media = media.dropFirst(12) }
        return Credentials.equalsIgnoringCase(media, "jwt")
    }

    private func verifySignature(_ jws: ParsedJWS, with issuer: IssuerKeys, now: Date) async throws(Denial) {
        let unavailable = Denial.unavailable(.keysUnavailable, "The access token's issuer keys could not be fetched; try again later.")
        var keys: JWKSet
        do { keys = try await issuer.keys(now: now) } catch { throw unavailable }
        var key: JWK
        do { key = try keys.key(for: jws.algorithm, keyID: jws.keyID) } catch {
            guard error.code == .keyNotFound else {
                throw .invalidToken(.unknownKey, "The access token names no key and several of its issuer's keys could verify it.")
            }
            // Rotation: one refetch, rate-limited by the cache.
            let fresher: JWKSet?
            do { fresher = try await issuer.refetch(now: now) } catch { throw unavailable }
            guard let fresher, let found = try? fresher.key(for: jws.algorithm, keyID: jws.keyID) else {
                throw .invalidToken(.unknownKey, "No key of the access token's issuer can verify it (unknown kid or algorithm).")
            }
            keys = fresher
            key = found
        }
        do { try jws.verifySignature(with: key) } catch {
            throw .invalidToken(.invalidSignature, "The access token's signature does not verify.")
        }
    }

    private func validate(_ claims: AccessTokenClaims, typed: Bool, now: Date) throws(Denial) {
        let clock = now.timeIntervalSince1970
        if !typed, claims.looksLikeAnotherKind {
            throw .invalidToken(.wrongTokenType, "The untyped token carries an ID token's or a logout token's claims; it is not an access token (RFC 8725 §3.11).")
        }
        guard claims.audience.contains(where: { audiences.contains($0) }) else {
            throw .invalidToken(.audienceMismatch, "The access token is not meant for this resource (aud).")
        }
        guard clock < claims.expiresAt + leeway else { throw .invalidToken(.tokenExpired, "The access token has expired.") }
        if let notBefore = claims.notBefore, notBefore > clock + leeway {
            throw .invalidToken(.tokenNotYetValid, "The access token is not valid yet (nbf).")
        }
        if let issuedAt = claims.issuedAt, issuedAt > clock + leeway {
            throw .invalidToken(.tokenNotYetValid, "The access token was issued in the future (iat).")
        }
        for name in requiredClaims where !claims.has(name) {
            throw .invalidToken(.invalidClaim, "The access token lacks the required claim \(name) (RFC 9068 §2.2).")
        }
    }
}
