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
        throw Self.refusal(retried, from: request.url)
    }

    /// The error for a 401 that a freshly refreshed token did not cure: the resource's own reason
    /// (its challenge's `error` and `error_description`, short and sanitised) quoted in the
    /// message, and its `resource_metadata` (RFC 9728) in the context, where a caller finds the
    /// resource to log in for. Never a token.
    static func refusal(_ response: HTTPResponse, from url: URL) -> OIDCError {
        let challenge = ResourceChallenge(response)
        var context = ["status": "401"]
        let reason = RefusalReason.text(of: response).map { ": \($0)" } ?? ""
        if let metadata = challenge?.resourceMetadata { context["resource_metadata"] = UntrustedText.sanitized(metadata, limit: 512) }
        let cause = reason.isEmpty
            ? "the token lacks rights there, or the resource trusts another issuer"
            : "the resource said why"
        return OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(url)) refused a freshly refreshed token (401\(reason)); \(cause).",
            context: context
        )
    }
}
