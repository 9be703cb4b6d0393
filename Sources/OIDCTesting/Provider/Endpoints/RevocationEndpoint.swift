internal import OIDC

/// `/revoke` (RFC 7009): the client authenticates as at the token endpoint; the answer is 200 for
/// any token, known or not. A refresh token revokes its whole family; an access token itself.
/// A token of another client is left alone (and still answered 200, so nothing is revealed).
enum RevocationEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "POST" else { return .methodNotAllowed("POST") }
        guard request.hasFormBody, let parameters = try? request.formParameters() else {
            return .oauthError(.invalidRequest("The revocation request must be application/x-www-form-urlencoded."))
        }
        if let name = parameters.firstDuplicateName {
            return .oauthError(.invalidRequest("The parameter '\(name)' appears more than once."))
        }
        let client: TestProvider.Client
        do {
            client = try await ClientAuthenticator.authenticate(request, parameters, context)
        } catch {
            return .oauthError(error)
        }
        guard let token = parameters.nonEmpty("token") else {
            return .oauthError(.invalidRequest("token is missing."))
        }
        await context.state.revoke(token, clientID: client.id)
        return ProviderResponse(status: 200, headers: ProviderResponse.noStore)
    }
}
