internal import Foundation

/// The resource pipeline's refresh: each request goes with the session's login, refreshed first
/// when it expires within the margin; a 401 from the resource gets one refresh and one retry,
/// never more; a 403 `insufficient_scope` is thrown as ``OIDCError/Code/insufficientScope`` at
/// once (`InsufficientScope`). The stages inside it read the attempt's token and proofs (``ResourceAttempt``).
struct RefreshRetryStage: HTTPStage {
    let session: AuthenticatedSession

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        let login = try await session.validLogin()
        let response = try await session.attempt(request, with: login, number: 1, next: next)
        // 403 insufficient_scope: no refresh, no retry (the same scopes would come back).
        if let stepUp = InsufficientScope.error(response, from: request.url) { throw stepUp }
        guard response.status == 401 else { return response }
        let fresh = try await session.refresh(afterRefusalOf: login, at: request.url)
        let retried = try await session.attempt(request, with: fresh, number: 2, next: next)
        if let stepUp = InsufficientScope.error(retried, from: request.url) { throw stepUp }
        guard retried.status == 401 else { return retried }
        throw OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(request.url)) refused a freshly refreshed token (401); the token lacks rights there, or the resource trusts another issuer.",
            context: ["status": "401"]
        )
    }
}
