internal import Foundation

extension RelyingParty {
    /// Completes a login at a plain OAuth server (``DiscoveredResource/isPlainOAuth``): the
    /// callback checked as always (state, RFC 9207 `iss`, the provider's error), the code exchanged
    /// with the PKCE verifier and the `resource`, and the login kept without a subject: no ID token
    /// was asked for, and one that comes anyway is not used to name anybody.
    func completePlainOAuthLogin(_ response: AuthorizationResponse, for request: AuthorizationRequest) async throws(OIDCError) -> StoredLogin {
        try checkSettings(of: request, sending: false)
        let client = tokenClient(proving: request.dpopKey)
        var tokens = try await client.exchangeCode(
            response.code, codeVerifier: request.pkce?.verifier, redirectURI: request.redirectURI, scopes: request.scopes)
        tokens.idToken = nil
        var login = StoredLogin(tokens: tokens, issuer: provider.issuer, clientID: clientID, subject: nil, provider: provider)
        login.dpopKey = request.dpopKey
        login.resource = tokenClient.resource
        return login
    }
}
