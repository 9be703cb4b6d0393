internal import Foundation
internal import Logging

/// The resource pipeline of a session, made once: every ``AuthenticatedSession/send(_:)`` goes
/// through it. Around the call, the user's call stages (``Options/callStages``); then the host
/// allowlist and the login (refreshed when it expires, and once on a 401, with one retry); in each
/// attempt, the DPoP nonce retry, the credential (the access token's header, the proof), the log of
/// each answer, then the user's stages (``Options/stages``), the allowlist again (a stage may have
/// changed the URL), then the ``transport``.
extension AuthenticatedSession {
    /// The library's stages of each attempt.
    static let attemptStages: [any ResourceStage] = [DPoPNonceRetryStage(), CredentialStage(), ResourceLoggingStage()]

    /// `request` as one logical call, through the user's call stages, each attempt ending at `transport`.
    func sendThroughPipeline(_ request: HTTPRequest, transport: any HTTPTransport) async throws(OIDCError) -> HTTPResponse {
        let call = LogicalCall(call: .resource, method: request.method, url: request.url)
        return try await options.callStages.run(call) { () async throws(OIDCError) -> HTTPResponse in
            try await self.sendRefreshing(request, call: call, transport: transport)
        }
    }

    /// `request` with the session's login, refreshed first when it expires within the margin; a
    /// 401 from the resource gets one refresh and one retry, never more; a 403
    /// `insufficient_scope` is thrown as ``OIDCError/Code/insufficientScope`` at once.
    nonisolated func sendRefreshing(_ request: HTTPRequest, call: LogicalCall, transport: any HTTPTransport) async throws(OIDCError) -> HTTPResponse {
        try Self.admit(request.url, to: allowlist, logger: logger)
        let login = try await validLogin()
        let response = try await Self.send(request, attempt: try await attempt(with: login, number: 1, call: call, transport: transport))
        // 403 insufficient_scope: no refresh, no retry (the same scopes would come back).
        if let stepUp = InsufficientScope.error(response, from: request.url) { throw stepUp }
        // 401 insufficient_user_authentication (RFC 9470): a new login, not a refresh.
        if let stepUp = StepUpAuthentication.error(response, from: request.url) { throw stepUp }
        guard response.status == 401 else { return response }
        let fresh = try await refresh(afterRefusalOf: login.tokens.accessToken, at: request.url)
        let retried = try await Self.send(request, attempt: try await attempt(with: fresh, number: 2, call: call, transport: transport))
        if let stepUp = InsufficientScope.error(retried, from: request.url) { throw stepUp }
        guard retried.status == 401 else { return retried }
        throw ResourceRefusal.error(retried, from: request.url)
    }

    /// Whether the access token may go to `url` (the allowlist): anything else is refused, and
    /// logged, before a login is read or a token refreshed.
    nonisolated static func admit(_ url: URL, to allowlist: HostAllowlist, logger: Logger) throws(OIDCError) {
        do { try allowlist.check(url) } catch {
            logger.notice("bearer token withheld from a host off the allowlist", metadata: ["url": .endpoint(url), "error": .code(error)])
            throw error
        }
    }

    /// Attempt `number` of a call with `login`'s access token (and its proofs, for DPoP-bound tokens).
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` before anything is sent when the login is DPoP-bound
    ///   and its key is missing or another key (`StoredLogin.dpopProofKey()`).
    func attempt(with login: StoredLogin, number: Int, call: LogicalCall, transport: any HTTPTransport) throws(OIDCError) -> ResourceAttempt {
        let credential = try credential(of: login)
        return ResourceAttempt(
            // The lines' metadata only when a line at debug or below can be logged: it costs a sanitiser call.
            credential: credential, number: number, metadata: logger.logLevel <= .debug ? lineMetadata() : [:],
            answerMetadata: DPoP.logMetadata(proving: credential.proofs), logger: logger, call: call, stages: options.stages, allowlist: allowlist,
            transport: transport, requestOptions: options.requestOptions)
    }

    /// `request` through the attempt's stages, the user's, the allowlist again and the transport.
    private nonisolated static func send(_ request: HTTPRequest, attempt: ResourceAttempt) async throws(OIDCError) -> HTTPResponse {
        try await attemptStages[...].run(request, attempt: attempt) { (request: HTTPRequest) async throws(OIDCError) -> HTTPResponse in
            attempt.call.attemptLeaves()
            return try await attempt.stages[...].run(request, call: .resource) { (request: HTTPRequest) async throws(OIDCError) -> HTTPResponse in
                // The user's stages run after the token is in the request: one that rewrote the URL (a base
                // URL, a proxy) must not take the token off the allowlist.
                if !attempt.stages.isEmpty { try admit(request.url, to: attempt.allowlist, logger: attempt.logger) }
                return try await attempt.transport.send(request, options: attempt.requestOptions)
            }
        }
    }

    /// After the resource at `url` refused `accessToken` (401): the refresh, once.
    func refresh(afterRefusalOf accessToken: Secret, at url: URL) async throws(OIDCError) -> StoredLogin {
        logger.debug("resource refused the access token (401); refreshing once", metadata: lineMetadata(["url": .endpoint(url)]))
        return try await refresh(replacing: accessToken, reason: "unauthorized")
    }
}
