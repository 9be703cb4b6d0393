internal import OIDC

/// `/introspect` (RFC 7662): the client authenticates as at the token endpoint and asks about a
/// token; the answer describes an active token of that client, or an active token for a resource
/// (RFC 8707) to any client that authenticates (the resource's server), and says
/// `{"active": false}` for everything else.
enum IntrospectionEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        let checked: ClientRequest
        switch await ClientRequest.read(request, context, what: "The introspection request") {
        case .success(let read): checked = read
        case .failure(let refusal): return refusal.response
        }
        guard let token = checked.parameters.nonEmpty("token") else { return .oauthError(.invalidRequest("token is missing.")) }
        return await context.state.introspect(token, client: checked.client)
    }
}
