internal import Foundation

/// A stage around a whole logical call (OkHttp's application interceptors): it runs once per call,
/// whatever happens inside (the DPoP nonce retry, a refresh after a 401 and the retry after it, a
/// provider's `invalid_target` retry), and sees its outcome: the answer, or the error thrown. The
/// place for a metric of calls and their duration, or a tracing span around the call (the
/// per-attempt ``HTTPStage``s inside then see that span as each request leaves).
///
/// Both pipelines run them, given once in ``RelyingParty/Configuration/callStages``: each call to
/// the provider, and each ``AuthenticatedSession/send(_:)`` of every session the relying party makes.
///
/// ```swift
/// struct Counting: CallStage {
///     let counts: Counts   // your own Sendable store
///     func intercept(_ call: LogicalCall, next: CallStage.Next) async throws(OIDCError) -> HTTPResponse {
///         do {
///             let response = try await next()
///             counts.add(call.call.logName, outcome: "\(response.status)", attempts: call.attempts)
///             return response
///         } catch {
///             counts.add(call.call.logName, outcome: "\(error.code)", attempts: call.attempts)
///             throw error
///         }
///     }
/// }
/// ```
public protocol CallStage: Sendable {
    /// The rest of the call: every attempt, retry and refresh, and the answer's check.
    typealias Next = @Sendable () async throws(OIDCError) -> HTTPResponse

    /// Handles the logical call `call`: usually calls `next` once and returns its answer.
    func intercept(_ call: LogicalCall, next: Next) async throws(OIDCError) -> HTTPResponse
}

extension Array where Element == any CallStage {
    /// `body`, inside each of these stages in order (the first outermost), as the call `call`.
    func run(
        _ call: LogicalCall, _ body: @escaping @Sendable () async throws(OIDCError) -> HTTPResponse
    ) async throws(OIDCError) -> HTTPResponse {
        // The one walk of every stage list; the call is the same object all the way down.
        try await OIDC.run(self[...], call, intercept: { stage, call, next async throws(OIDCError) in
            try await stage.intercept(call) { () async throws(OIDCError) -> HTTPResponse in try await next(call) }
        }, then: { _ async throws(OIDCError) in try await body() })
    }
}
