public import Foundation
public import Logging

/// A completed login: tokens whose ID token passed every check of OIDC Core §3.1.3.7.
public struct VerifiedLogin: Sendable {
    /// The tokens of the code exchange; their ID token is the one verified.
    public let tokens: TokenSet
    /// The verified ID token and its claims.
    public let idToken: IDToken
}

extension TokenClient {
    /// Finishes a login: exchanges the callback's code with the request's PKCE verifier, then
    /// verifies the ID token (signature with the provider's keys; `iss`, `aud`/`azp`, `exp`, `iat`,
    /// the request's `nonce`, `at_hash` with the new access token, `auth_time` when `max_age` was
    /// sent, the `amr` the request requires, such as Schibsted's MFA) before anything is returned.
    ///
    /// - Parameters:
    ///   - response: the checked callback (``AuthorizationRequest/handleRedirect(_:)``).
    ///   - request: the request that started the login; its `issuer` is required.
    ///   - keys: the provider's keys (``JWKSCache/init(transport:jwksURI:maximumAge:unknownKeyCooldown:logger:)``):
    ///     an unknown `kid` refetches them once, for key rotation.
    ///   - now: the time the ID token is checked at; the client's clock (``now``) when `nil`.
    ///   - configure: a last say over the verifier (leeway, clock offset, allowed algorithms).
    /// - Throws: `invalidArgument` when the request names no issuer; what
    ///   ``exchangeCode(_:codeVerifier:redirectURI:scopes:)`` throws; the verifier's security errors;
    ///   `missingParameter` when the answer has no ID token (was `openid` asked?).
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
        guard let idToken = tokens.idToken else {
            throw OIDCError(.missingParameter, "The token response has no ID token; the login needs the 'openid' scope.")
        }
        var verifier = IDTokenVerifier(issuer: issuer, clientID: clientID, nonce: request.nonce.map { .expected($0) } ?? .absent)
        verifier.issuerMatching = request.issuerMatching
        verifier.maxAge = request.maxAge
        verifier.accessToken = tokens.accessToken
        verifier.requiredAMRValues = request.requiredAMRValues
        if clientSecret != nil { verifier.hmacSecret = clientSecret }
        configure(&verifier)
        let verified: IDToken
        do { verified = try await verifier.verify(idToken.revealedValue, keys: keys, now: now ?? self.now()) } catch let error as OIDCError {
            throw error
        } catch {
            throw OIDCError(.networkFailure, "The provider's keys could not be fetched: \(error).")
        }
        return VerifiedLogin(tokens: tokens, idToken: verified)
    }
}

extension JWKSCache {
    /// A cache that fetches `jwksURI` through `transport` (https, or http on loopback; 1 MiB at most).
    ///
    /// - Parameters:
    ///   - transport: fetches the document.
    ///   - jwksURI: the provider's `jwks_uri`.
    ///   - maximumAge: seconds a fetched set is used (5 minutes by default).
    ///   - unknownKeyCooldown: seconds before a refetch for an unknown `kid` (1 minute).
    ///   - logger: where fetches and cache decisions are logged; `nil` (the default) logs nothing.
    public init(
        transport: any HTTPTransport, jwksURI: URL, maximumAge: TimeInterval = 300, unknownKeyCooldown: TimeInterval = 60, logger: Logger? = nil
    ) {
        self.init(maximumAge: maximumAge, unknownKeyCooldown: unknownKeyCooldown, logger: logger) { () async throws(OIDCError) -> [UInt8] in
            try EndpointPolicy.validate(jwksURI, role: "JWKS URI")
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json, application/jwk-set+json")
            let response = try await transport.send(HTTPRequest(method: "GET", url: jwksURI, headers: headers))
            guard response.status == 200 else {
                throw HTTPErrorMapping.unexpectedStatus(response, endpoint: jwksURI, what: "JWKS")
            }
            return response.body
        }
    }
}
