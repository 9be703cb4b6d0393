internal import Foundation
internal import Logging

/// One attempt of a resource request: the login's access token and its proofs, which the stages
/// inside the refresh (``RefreshRetryStage``) read. A refresh starts a second attempt with the new
/// tokens. Set around the attempt as a task-local value, so that the stages stay values.
struct ResourceAttempt: Sendable {
    /// The attempt of the request in progress in this task, if any.
    @TaskLocal static var current: ResourceAttempt?

    /// The access token to send.
    let accessToken: Secret
    /// The proofs of DPoP-bound tokens; `nil` for bearer tokens.
    let proofs: DPoP?
    /// 1, then 2 after a refresh.
    let number: Int
    /// What the session's lines carry: its login's issuer, its account.
    let metadata: Logger.Metadata
    /// What the lines about the resource's answers carry besides: whether a proof went.
    let answerMetadata: Logger.Metadata
}
