internal import Foundation

extension TokenExchangeRequest.TokenType {
    /// `urn:ietf:params:oauth:token-type:id-jag`: an identity assertion JWT authorization grant
    /// (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant), which an identity provider issues
    /// for another authorization server.
    public static let identityAssertion = "urn:ietf:params:oauth:token-type:id-jag"
}

/// The identity assertion authorization grant (ID-JAG): the first half, at the identity provider.
/// MCP's enterprise-managed authorization uses it: a user signed in at their company's identity
/// provider gets tokens for a resource whose authorization server trusts that provider, with no
/// browser. The second half is ``TokenClient/jwtBearer(assertion:scopes:parameters:)`` at the
/// resource's authorization server.
extension TokenClient {
    /// Asks this (identity) provider for an ID-JAG (a token exchange, RFC 8693): the user's ID
    /// token as `subject_token` (of type `urn:ietf:params:oauth:token-type:id_token`),
    /// `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, `audience` the issuer of the
    /// authorization server the ID-JAG is for, `resource` the resource's URL (RFC 8707) and `scope`;
    /// with the client's authentication. The ID-JAG is a credential for that authorization
    /// server's token endpoint only: it is returned as a ``Secret`` and never logged.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for an empty audience;
    ///   ``OIDCError/Code/malformedResponse`` when the answer's `issued_token_type` is not the
    ///   ID-JAG's, or its token is not a compact JWT; what ``exchangeToken(_:)`` throws (a
    ///   refusal is ``OIDCError/Code/providerError``).
    public func requestIdentityAssertion(idToken: Secret, audience: String, resource: String?, scopes: [String] = []) async throws(OIDCError)
        -> Secret
    {
        guard !audience.isEmpty else {
            throw .invalidArgument("An identity assertion names the authorization server it is for: give its issuer as the audience.")
        }
        var request = TokenExchangeRequest(subjectToken: idToken, subjectTokenType: TokenExchangeRequest.TokenType.idToken)
        request.requestedTokenType = TokenExchangeRequest.TokenType.identityAssertion
        request.audiences = [audience]
        request.resources = resource.map { [$0] } ?? []
        request.scopes = scopes
        let result = try await exchangeToken(request)
        guard result.issuedTokenType == TokenExchangeRequest.TokenType.identityAssertion else {
            throw OIDCError(
                .malformedResponse,
                "The identity provider answered the ID-JAG exchange with a token of type '\(UntrustedText.sanitized(result.issuedTokenType, limit: 120))', not \(TokenExchangeRequest.TokenType.identityAssertion).")
        }
        do throws(OIDCError) { _ = try Self.checkedAssertion(result.tokens.accessToken) } catch {
            throw OIDCError(.malformedResponse, "The identity provider's ID-JAG is not a JWT in the compact form.")
        }
        return result.tokens.accessToken
    }
}
