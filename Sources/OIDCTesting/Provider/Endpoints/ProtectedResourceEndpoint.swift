/// `/api/me`: a resource server behind the provider. 200 with who the token belongs to for a valid
/// access token; 401 with `WWW-Authenticate: Bearer error="invalid_token"` otherwise.
enum ProtectedResourceEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "GET" || request.method == "POST" else { return .methodNotAllowed("GET, POST") }
        switch await BearerAuthentication.authenticate(request, context) {
        case .failure(let unauthorized):
            return unauthorized.response
        case .success(let valid):
            var body = valid.user.profileClaims
            body["client_id"] = valid.record.clientID
            body["scope"] = valid.record.scope
            return .json(body, noStore: true)
        }
    }
}
