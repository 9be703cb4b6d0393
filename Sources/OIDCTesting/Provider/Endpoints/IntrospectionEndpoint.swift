internal import OIDC

/// `/introspect` (RFC 7662): the client authenticates as at the token endpoint and asks about a
/// token; the answer describes an active token of that client, and says `{"active": false}` for
/// everything else.
enum IntrospectionEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "POST" else { return .methodNotAllowed("POST") }
        guard request.hasFormBody, let parameters = try? request.formParameters() else {
            return .oauthError(.invalidRequest("The introspection request must be application/x-www-form-urlencoded."))
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
        guard let token = parameters.nonEmpty("token") else { return .oauthError(.invalidRequest("token is missing.")) }
        return await context.state.introspect(token, client: client)
    }
}
