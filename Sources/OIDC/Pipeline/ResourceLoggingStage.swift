internal import Foundation
internal import Logging

/// The resource pipeline's innermost library stage: each answer at `trace` (`resource answered`,
/// with the URL without its query, the status and the attempt), never a header.
struct ResourceLoggingStage: ResourceStage {
    func intercept(_ request: HTTPRequest, attempt: ResourceAttempt, next: Next) async throws(OIDCError) -> HTTPResponse {
        let response = try await next(request)
        attempt.logger.trace(
            "resource answered",
            metadata: attempt.metadata.merging(attempt.answerMetadata) { $1 }.merging([
                "url": .endpoint(request.url), "status": .int(response.status), "attempt": .int(attempt.number),
            ]) { $1 })
        return response
    }
}
