/// `/userinfo` (OIDC Core §5.3): the signed-in user's claims for a valid access token, GET or POST:
/// a bearer token, or a DPoP-bound one with its proof (`BearerAuthentication`).
enum UserinfoEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "GET" || request.method == "POST" else { return .methodNotAllowed("GET, POST") }
        switch await BearerAuthentication.authenticate(request, endpoint: .userinfo, context) {
        case .failure(let unauthorized):
            return unauthorized.response
        case .success(let valid):
            var claims = valid.user.profileClaims
            if let acr = valid.user.acr { claims["acr"] = acr }
            if let amr = valid.user.amr { claims["amr"] = amr }
            return .json(claims, noStore: true, extraHeaders: valid.headers)
        }
    }
}
