internal import Foundation
internal import Logging

/// One attempt of a resource request: the login's access token and its proofs, and what the
/// attempt's stages and its end need (the user's stages, the transport). A refresh starts a second
/// attempt with the new tokens. It is an argument of each stage, never ambient state.
struct ResourceAttempt: Sendable {
    /// The access token to send, and the proofs of DPoP-bound tokens.
    let credential: ResourceCredential
    /// 1, then 2 after a refresh.
    let number: Int
    /// What the session's lines carry: its login's issuer, its account.
    let metadata: Logger.Metadata
    /// What the lines about the resource's answers carry besides: whether a proof went.
    let answerMetadata: Logger.Metadata
    /// Where the session logs.
    let logger: Logger
    /// The logical call, whose attempts this one counts in.
    let call: LogicalCall
    /// The user's per-attempt stages (``AuthenticatedSession/Options/stages``).
    let stages: [any HTTPStage]
    /// The hosts the token may go to, checked again after the user's stages (one may have changed the URL).
    let allowlist: HostAllowlist
    /// Sends the request the stages hand on.
    let transport: any HTTPTransport
    /// Timeout and size limit of every request.
    let requestOptions: HTTPRequestOptions
}

/// A library stage of the resource pipeline: it sees each request of an attempt, with the attempt.
protocol ResourceStage: Sendable {
    /// The rest of the attempt after this stage.
    typealias Next = @Sendable (HTTPRequest) async throws(OIDCError) -> HTTPResponse

    /// Handles `request`, of `attempt`: usually changes it, hands it to `next`, and returns the answer.
    func intercept(_ request: HTTPRequest, attempt: ResourceAttempt, next: Next) async throws(OIDCError) -> HTTPResponse
}

extension ArraySlice where Element == any ResourceStage {
    /// `request` through these stages in order, as part of `attempt`, then `last`.
    func run(_ request: HTTPRequest, attempt: ResourceAttempt, then last: @escaping ResourceStage.Next) async throws(OIDCError) -> HTTPResponse {
        try await OIDC.run(self, request, intercept: { stage, request, next async throws(OIDCError) in
            try await stage.intercept(request, attempt: attempt, next: next)
        }, then: last)
    }
}
