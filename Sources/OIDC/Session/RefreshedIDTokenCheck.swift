import Foundation
internal import Logging

/// The rules a refreshed ID token must pass to replace the one verified at login (OIDC Core §12.2):
/// a valid signature by the provider's keys with an allowed algorithm (the session's
/// ``AuthenticatedSession/Options/refreshedIDTokenAlgorithms``, within those of the session's
/// ``AuthenticatedSession/Options/securityProfile``), the same issuer and subject, this client, the new
/// access token's `at_hash`, and the original `auth_time`. Its nonce is not checked (providers
/// repeat the original one or send none).
struct RefreshedIDTokenCheck {
    /// The login the token refreshes.
    let login: StoredLogin
    /// How issuers are compared.
    let issuerMatching: IssuerMatching
    /// The provider's keys.
    let keys: JWKSCache
    /// The signature algorithms allowed; the verifier's default when `nil`.
    var algorithms: Set<JWSAlgorithm>? = nil
    /// The profile the login was held to, which holds the refreshed token too.
    var profile: SecurityProfile = .none

    /// The verified token, or the rule it broke.
    func verify(_ idToken: Secret, accessToken: Secret, now: Date) async throws(OIDCError) -> IDToken {
        guard let subject = login.subject else {
            throw OIDCError(
                .invalidClaim, "The stored login names no subject, so a refreshed ID token cannot be tied to its user; the login's own is kept.",
                context: ["claim": "sub"]
            )
        }
        var verifier = IDTokenVerifier(
            tokenResponseOf: login.issuer, clientID: login.clientID, nonce: .notChecked, accessToken: accessToken, issuerMatching: issuerMatching,
            profile: profile)
        if let algorithms { verifier.allowedAlgorithms.formIntersection(algorithms) }
        let verified = try await verifier.verify(idToken.revealedValue, keys: keys, now: now)
        if verified.claims.subject != subject {
            throw OIDCError(.invalidClaim, "The refreshed ID token is about another user (sub differs).", context: ["claim": "sub"])
        }
        let original = login.tokens.idToken.flatMap { try? UnverifiedJWT($0.revealedValue) }?.claims["auth_time"]?.numberValue
        if let original, let renewed = verified.claims.authTime, renewed.timeIntervalSince1970 != original {
            throw OIDCError(
                .invalidClaim, "The refreshed ID token's auth_time is not the original authentication's (OIDC Core §12.2).",
                context: ["claim": "auth_time"]
            )
        }
        return verified
    }
}

extension AuthenticatedSession {
    /// `answer` with its ID token if it passes ``RefreshedIDTokenCheck`` for `login`, else without
    /// (the login's own is kept, and ``SessionEvent/refreshedIDTokenRejected(_:)`` says why).
    func checkedIDToken(in answer: TokenSet, for login: StoredLogin, client: TokenClient) async -> TokenSet {
        guard let idToken = answer.idToken else { return answer }
        var answer = answer
        answer.idToken = nil
        guard let keys = options.refreshedIDTokenKeys else { return answer }
        let check = RefreshedIDTokenCheck(
            login: login, issuerMatching: client.provider.issuerMatching, keys: keys, algorithms: options.refreshedIDTokenAlgorithms,
            profile: options.securityProfile)
        do {
            _ = try await check.verify(idToken, accessToken: answer.accessToken, now: now())
            answer.idToken = idToken
        } catch {
            logger.warning("refreshed ID token failed verification; the login's own is kept", metadata: lineMetadata(.failure(error)))
            eventSink.yield(.refreshedIDTokenRejected(error))
        }
        return answer
    }
}
