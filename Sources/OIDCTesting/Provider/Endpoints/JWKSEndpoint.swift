/// `/jwks`: every published key, the current RSA and EC keys first (RFC 7517 §5).
enum JWKSEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "GET" else { return .methodNotAllowed("GET") }
        do {
            return ProviderResponse(
                status: 200, headers: [("Content-Type", "application/jwk-set+json")], body: try await context.state.jwksJSON()
            )
        } catch {
            return .text("The keys could not be exported.", status: 500)
        }
    }
}
