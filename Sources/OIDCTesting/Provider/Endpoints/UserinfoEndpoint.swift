/// `/userinfo` (OIDC Core §5.3): the signed-in user's claims for a valid bearer token, GET or POST.
enum UserinfoEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "GET" || request.method == "POST" else { return .methodNotAllowed("GET, POST") }
        switch await BearerAuthentication.authenticate(request, context) {
        case .failure(let unauthorized):
            return unauthorized.response
        case .success(let valid):
            var claims = valid.user.profileClaims
            if let acr = valid.user.acr { claims["acr"] = acr }
            if let amr = valid.user.amr { claims["amr"] = amr }
            return .json(claims, noStore: true)
        }
    }
}
