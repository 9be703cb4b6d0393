/// `/api/me`: a resource server behind the provider. 200 with who the token belongs to for a valid
/// access token (a bearer token, or a DPoP-bound one with its proof); 401 with a `WWW-Authenticate`
/// challenge otherwise (`BearerAuthentication`).
enum ProtectedResourceEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "GET" || request.method == "POST" else { return .methodNotAllowed("GET, POST") }
        switch await BearerAuthentication.authenticate(request, endpoint: .protectedResource, context) {
        case .failure(let unauthorized):
            return unauthorized.response
        case .success(let valid):
            var body = valid.user.profileClaims
            body["client_id"] = valid.record.clientID
            body["scope"] = valid.record.scope
            return .json(body, noStore: true, extraHeaders: valid.headers)
        }
    }
}
