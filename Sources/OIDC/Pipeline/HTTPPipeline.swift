internal import Foundation

/// A request through `stages` in order, each seeing it as it leaves and handing it on with its
/// `next`, then `last`: the one walk of every stage list of both pipelines (the provider's OAuth
/// stages, the resource attempt's, the user's per-attempt stages).
func run<Stage: Sendable, Request: Sendable>(
    _ stages: ArraySlice<Stage>, _ request: Request,
    intercept: @escaping @Sendable (Stage, Request, @escaping @Sendable (Request) async throws(OIDCError) -> HTTPResponse) async throws(OIDCError) -> HTTPResponse,
    then last: @escaping @Sendable (Request) async throws(OIDCError) -> HTTPResponse
) async throws(OIDCError) -> HTTPResponse {
    guard let stage = stages.first else { return try await last(request) }
    let rest = stages.dropFirst()
    return try await intercept(stage, request) { (next: Request) async throws(OIDCError) -> HTTPResponse in
        try await run(rest, next, intercept: intercept, then: last)
    }
}

extension ArraySlice where Element == any HTTPStage {
    /// `request`, the call `call`, through these stages in order (each sees it as it leaves), then `last`.
    func run(_ request: HTTPRequest, call: HTTPCall, then last: @escaping HTTPStage.Next) async throws(OIDCError) -> HTTPResponse {
        try await OIDC.run(self, request, intercept: { stage, request, next async throws(OIDCError) in
            try await stage.intercept(request, call: call, next: next)
        }, then: last)
    }
}
