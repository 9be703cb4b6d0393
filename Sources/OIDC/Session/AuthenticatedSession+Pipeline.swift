internal import Foundation
internal import Logging

/// The resource pipeline of a session: every ``AuthenticatedSession/send(_:)`` goes through it.
extension AuthenticatedSession {
    /// The pipeline: the host allowlist, the login (refreshed when it expires, and once on a 401),
    /// the access token's header, the DPoP nonce retry and proof, the log of each answer, then the
    /// user's stages (``Options/stages``), the allowlist again (a stage may have changed the URL),
    /// then the ``transport``.
    var resourcePipeline: HTTPPipeline {
        let logger = logger
        let proofs: @Sendable () -> DPoP? = { ResourceAttempt.current?.proofs }
        let library: [any HTTPStage] = [
            HostAllowlistStage(allowlist: allowlist, logger: logger),
            RefreshRetryStage(session: self),
            AccessTokenStage(),
            DPoPNonceRetryStage(proofs: proofs) { request, _ in
                logger.debug(
                    "resource asked for a DPoP nonce; retrying once with it",
                    metadata: (ResourceAttempt.current?.metadata ?? [:]).merging(["url": .endpoint(request.url)]) { $1 })
            },
            DPoPProofStage(proofs: proofs),
            ResourceLoggingStage(logger: logger),
        ]
        // The user's stages run after the token is in the request: one that rewrote the URL (a base
        // URL, a proxy) must not take the token off the allowlist, so it is checked again after them.
        let recheck: [any HTTPStage] = options.stages.isEmpty ? [] : [HostAllowlistStage(allowlist: allowlist, logger: logger)]
        return HTTPPipeline(stages: library + options.stages + recheck, transport: transport, options: options.requestOptions)
    }

    /// Sends `request` on through `next` with `login`'s access token (and its proofs, for
    /// DPoP-bound tokens): attempt `number`.
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` before anything is sent when the login is DPoP-bound
    ///   and its key is missing or another key (`StoredLogin.dpopProofKey()`); what `next` throws.
    func attempt(_ request: HTTPRequest, with login: StoredLogin, number: Int, next: HTTPStage.Next) async throws(OIDCError) -> HTTPResponse {
        let proofs = try DPoP.proofs(for: login, describedAs: "under \(key)", nonces: dpopNonces, now: now)
        let attempt = ResourceAttempt(
            // The lines' metadata only when a line at debug or below can be logged: it costs a sanitiser call.
            accessToken: login.tokens.accessToken, proofs: proofs, number: number, metadata: logger.logLevel <= .debug ? lineMetadata() : [:],
            answerMetadata: DPoP.logMetadata(proving: proofs))
        return try await withTaskLocal(ResourceAttempt.$current, attempt) { () async throws(OIDCError) -> HTTPResponse in try await next(request) }
    }

    /// After the resource at `url` refused `login`'s access token (401): the refresh, once.
    func refresh(afterRefusalOf login: StoredLogin, at url: URL) async throws(OIDCError) -> StoredLogin {
        logger.debug("resource refused the access token (401); refreshing once", metadata: lineMetadata(["url": .endpoint(url)]))
        return try await refresh(replacing: login.tokens.accessToken, reason: "unauthorized")
    }
}
