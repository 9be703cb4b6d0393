internal import Foundation

/// Grants without a user at the browser: client credentials (RFC 6749 §4.4) and any extension
/// grant (RFC 6749 §4.5) by its `grant_type`.
extension TokenClient {
    /// Parameters a grant's caller may not set: the library sets them itself.
    static let reservedGrantParameters: Set<String> = [
        "grant_type", "client_id", "client_secret", "client_assertion", "client_assertion_type", "scope",
    ]

    /// Tokens for the client itself (RFC 6749 §4.4): for daemons, CI jobs and services, with no
    /// user involved. The answer has no refresh token (§4.4.3): ask again when the access token
    /// expires (``AuthenticatedSession/TokenSource/clientCredentials(_:scopes:parameters:)`` does).
    ///
    /// - Parameters:
    ///   - scopes: the scope values asked for; none sends no `scope`.
    ///   - parameters: more parameters, such as `resource` (RFC 8707) or `audience`.
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a public client (it has no credentials to
    ///   present) or a reserved parameter; what ``grant(_:parameters:scopes:)`` throws.
    public func clientCredentials(scopes: [String] = [], parameters: [OAuthParameter] = []) async throws(OIDCError) -> TokenSet {
        guard authentication.method != .none else {
            throw .invalidArgument(
                "Client credentials need a confidential client: configure its secret or private key (ClientAuthentication); a public client has nothing to present.")
        }
        return try await grant("client_credentials", parameters: parameters, scopes: scopes)
    }

    /// A request at the token endpoint with `grant_type` `grantType` and `parameters`, authenticated
    /// as the client: any extension grant (RFC 6749 §4.5), such as RFC 7523's JWT bearer grant. The
    /// answer is read as a token response with a `Bearer` token.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a parameter the library sets itself
    ///   (`grant_type`, `scope`, client authentication) or a scope value that is not an RFC 6749 §3.3
    ///   token; what ``refresh(_:scopes:)`` throws.
    public func grant(_ grantType: String, parameters: [OAuthParameter], scopes: [String] = []) async throws(OIDCError) -> TokenSet {
        try await postGrant(grantType, parameters: parameters, scopes: scopes) { [self] (response: HTTPResponse) throws(OIDCError) -> TokenSet in
            try tokens(from: response, requestedScopes: scopes, grantType: grantType)
        }
    }

    /// The 200 answer of a grant request, as `read` reads it.
    func postGrant<Answer: Sendable>(
        _ grantType: String, parameters: [OAuthParameter], scopes: [String], read: @escaping @Sendable (HTTPResponse) throws(OIDCError) -> Answer
    ) async throws(OIDCError) -> Answer {
        guard !grantType.isEmpty else { throw .invalidArgument("The grant type is empty.") }
        if let reserved = parameters.first(where: { Self.reservedGrantParameters.contains($0.name) }) {
            throw .invalidArgument(
                "The parameter '\(UntrustedText.sanitized(reserved.name, limit: 64))' is set by the library; pass scopes as `scopes` and the client's credentials as its authentication.")
        }
        var form = [OAuthParameter("grant_type", grantType)] + parameters
        if !scopes.isEmpty { form.append(OAuthParameter("scope", try AuthorizationRequest.scopeValue(scopes))) }
        return try await post(form, .grant(GrantType(rawValue: grantType)), to: try endpoint(provider.tokenEndpoint, "token endpoint"), read: read)
    }
}
