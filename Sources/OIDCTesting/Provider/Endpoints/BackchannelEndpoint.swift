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
            return try await context.state.authorizeBackchannel(client: checked.client, parameters: checked.parameters)
        } catch {
            return .oauthError(error)
        }
    }
}
