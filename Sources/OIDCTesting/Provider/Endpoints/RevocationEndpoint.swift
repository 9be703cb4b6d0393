internal import OIDC

/// `/revoke` (RFC 7009): the client authenticates as at the token endpoint; the answer is 200 for
/// any token, known or not. A refresh token revokes its whole family; an access token itself.
/// A token of another client is left alone (and still answered 200, so nothing is revealed).
enum RevocationEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        let checked: ClientRequest
        switch await ClientRequest.read(request, context, what: "The revocation request") {
        case .success(let read): checked = read
        case .failure(let refusal): return refusal.response
        }
        guard let token = checked.parameters.nonEmpty("token") else { return .oauthError(.invalidRequest("token is missing.")) }
        await context.state.revoke(token, clientID: checked.client.id)
        return ProviderResponse(status: 200, headers: ProviderResponse.noStore)
    }
}
