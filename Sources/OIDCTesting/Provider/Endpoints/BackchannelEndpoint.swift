internal import OIDC

/// `/bc-authorize` (OpenID CIBA Core 1.0 §7): a confidential client, authenticated as at the
/// token endpoint, asks for a user's approval on their device.
enum BackchannelEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        let checked: ClientRequest
        switch await ClientRequest.read(request, context, what: "The backchannel authentication request") {
        case .success(let read): checked = read
        case .failure(let refusal): return refusal.response
        }
        do throws(OAuthError) {
            try RegisteredGrants.check(checked.client, uses: GrantType.ciba.rawValue)
            var parameters = checked.parameters
            if let object = parameters["request"] {
                // A signed request (CIBA Core §7.1.1): its claims are the request; nothing outside counts.
                parameters = try await RequestObjectCheck.parameters(object, clientID: checked.client.id, context, untyped: true)
            }
            return try await context.state.authorizeBackchannel(client: checked.client, parameters: parameters)
        } catch {
            return .oauthError(error)
        }
    }
}
