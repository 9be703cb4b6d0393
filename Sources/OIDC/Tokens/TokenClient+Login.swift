public import Foundation

extension TokenClient {
    /// Finishes a login: exchanges the callback's code with the request's PKCE verifier, then
    /// verifies the ID token (signature with the provider's keys; `iss`, `aud`/`azp`, `exp`, `iat`,
    /// the request's `nonce`, `at_hash` with the new access token, `auth_time` when `max_age` was
    /// sent, the `amr` the request requires, such as Schibsted's MFA) before anything is returned.
    /// ``RelyingParty/completeLogin(callback:for:now:)`` does this from the callback URL.
    ///
    /// - Parameters:
    ///   - response: the checked callback (``AuthorizationRequest/handleRedirect(_:)``).
    ///   - request: the request that started the login; its `issuer` is required.
    ///   - keys: the provider's keys (``JWKSCache/init(transport:jwksURI:maximumAge:unknownKeyCooldown:logger:)``):
    ///     an unknown `kid` refetches them once, for key rotation.
    ///   - now: the time the ID token is checked at; the client's clock (``now``) when `nil`.
    ///   - configure: a last say over the verifier (leeway, clock offset, allowed algorithms).
    /// - Throws: `invalidArgument` when the request names no issuer; what
    ///   ``exchangeCode(_:codeVerifier:redirectURI:scopes:)`` throws; the verifier's security errors
    ///   and what ``JWKSCache/keys()`` throws; `missingParameter` when the answer has no ID token
    ///   (was `openid` asked?).
    public func completeLogin(
        _ response: AuthorizationResponse, for request: AuthorizationRequest, keys: JWKSCache, now: Date? = nil,
        configure: (inout IDTokenVerifier) -> Void = { _ in }
    ) async throws(OIDCError) -> VerifiedLogin {
        guard let issuer = request.issuer else {
            throw .invalidArgument("The authorization request names no issuer; the ID token cannot be checked without one.")
        }
        let tokens = try await exchangeCode(
            response.code, codeVerifier: request.pkce?.verifier, redirectURI: request.redirectURI, scopes: request.scopes
        )
        var verifier = loginVerifier(issuer: issuer, nonce: request.nonce.map { .expected($0) } ?? .absent, tokens: tokens)
        verifier.issuerMatching = request.issuerMatching
        verifier.maxAge = request.maxAge
        verifier.requiredAMRValues = request.requiredAMRValues
        if let required = request.requiredACRValues { verifier.acceptedACRValues = Set(required) }
        configure(&verifier)
        return try await verifiedLogin(tokens, verifier: verifier, keys: keys, now: now)
    }

    /// The verifier of a login's ID token: `issuer`, this client, `nonce`, the new access token's
    /// `at_hash`, and the client secret for HS256 when one is configured.
    func loginVerifier(issuer: String, nonce: IDTokenVerifier.NonceRule, tokens: TokenSet) -> IDTokenVerifier {
        IDTokenVerifier(tokenResponseOf: issuer, clientID: clientID, nonce: nonce, accessToken: tokens.accessToken, issuerMatching: provider.issuerMatching, hmacSecret: authentication.secret)
    }

    /// `tokens` as a verified login, once their ID token passes `verifier`.
    ///
    /// - Throws: `missingParameter` when there is no ID token (was `openid` asked?); the verifier's
    ///   errors.
    func verifiedLogin(_ tokens: TokenSet, verifier: IDTokenVerifier, keys: JWKSCache, now: Date?) async throws(OIDCError) -> VerifiedLogin {
        guard let idToken = tokens.idToken else {
            throw OIDCError(.missingParameter, "The token response has no ID token; the login needs the 'openid' scope.")
        }
        let verified = try await verifier.verify(idToken.revealedValue, keys: keys, now: now ?? self.now())
        var login = VerifiedLogin(tokens: tokens, idToken: verified, clientID: clientID, issuer: verifier.issuer, provider: provider)
        login.dpopKey = provingKey
        return login
    }
}
