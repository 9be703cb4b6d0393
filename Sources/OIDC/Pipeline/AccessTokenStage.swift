internal import Foundation

/// The resource pipeline's access token: `Authorization: Bearer` with the attempt's token (RFC
/// 6750 §2.1). The DPoP stage inside it turns the header into `Authorization: DPoP` for DPoP-bound
/// tokens.
struct AccessTokenStage: HTTPStage {
    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard let attempt = ResourceAttempt.current else { return try await next(request) }
        var request = request
        request.headers.set("Authorization", "Bearer " + attempt.accessToken.revealedValue)
        return try await next(request)
    }
}
