public import Foundation
public import Logging

/// Performs requests with `Authorization: Bearer <access token>` and keeps the token fresh
/// (RFC 6750).
///
/// - The token goes only to hosts on the ``HostAllowlist``, over https (http only to loopback).
/// - It is refreshed shortly before it expires, and on a 401 from the resource: once, then the
///   request is retried once. A request never loops.
/// - Concurrent callers share one refresh. Across processes the refresh runs under the store's lock
///   and re-reads the store first, so tokens another process already rotated are used, not spent again.
///   A caller cancelled while the refresh runs stops waiting at once (``OIDCError/Code/cancelled``);
///   the refresh itself goes on, since stopping it halfway could lose tokens the provider has already
///   rotated, and the next call uses its tokens.
/// - A refresh the provider rejects (`invalid_grant`, `invalid_client`) logs the user out:
///   the stored login is deleted, ``events`` and the delegate are told. A transient failure (network,
///   5xx, timeout) logs nobody out: the caller gets a retryable error, and the next call tries again.
/// - With a store whose lock can be lost (``TokenStore/lockCanBeLost``, a database), each refresh is
///   marked in flight in the stored login before the refresh token is sent. An instance that takes
///   the lock while another instance's refresh is marked (that instance's lock was lost) does not
///   spend the same refresh token: it waits for that refresh's tokens (``inFlightRefreshWait``), and
///   refreshed tokens the store refused on a lost lock are saved at once under a new lock, over the
///   login they replace only (a login deleted or replaced meanwhile is never brought back; the
///   host application's tokens, from ``TokenSource/host(_:)``, are saved over whatever is stored).
///
/// ```swift
/// let session = AuthenticatedSession(store: keychain, key: .schibsted(clientID: id),
///                                    source: .refreshToken(tokenClient), transport: transport,
///                                    allowlist: .default(for: apiBaseURL))
/// let response = try await session.send(HTTPRequest(url: apiBaseURL.appendingPathComponent("me")))
/// ```
///
/// With a ``logger``: requests, refreshes, lock waits and adopted tokens at `debug`/`trace`; a
/// logout after a rejected refresh at `notice`; a refresh that failed for a transient reason, tokens
/// the store refused, and a refreshed ID token that failed verification at `warning`. Never a token
/// or an `Authorization` header (see <doc:Logging>).
public actor AuthenticatedSession {
    /// Where new tokens come from.
    public enum TokenSource: Sendable {
        /// The stored refresh token, at the provider's token endpoint.
        case refreshToken(TokenClient)
        /// The host application's token provider (the Subaio Fintech Bridge pattern). It runs under
        /// the store's lock, one call at a time; it must not call back into this session.
        case host(@Sendable () async -> TokenProviderOutcome)
    }

    /// Where the login is kept; refreshes run under its lock.
    public let store: any TokenStore
    /// The login's key in ``store``.
    public let key: TokenStoreKey
    /// Where new tokens come from.
    public let source: TokenSource
    /// Sends the resource requests.
    public let transport: any HTTPTransport
    /// The hosts that may receive the bearer token.
    public let allowlist: HostAllowlist
    /// A token expiring within this many seconds is refreshed before use (60 by default).
    public var refreshMargin: TimeInterval = 60
    /// How long to wait before asking a token provider again after "temporarily unavailable"
    /// without a delay of its own (60 s by default).
    public var temporarilyUnavailableDelay: TimeInterval = 60
    /// Timeout and size limit for the resource requests.
    public var requestOptions = HTTPRequestOptions()
    /// How long a refresh waits for another instance's refresh of the same login that is marked in
    /// flight (stores whose lock can be lost only, ``TokenStore/lockCanBeLost``), before it gives up
    /// with `OIDCError.Code.temporarilyUnavailable` (10 s by default). A mark counts for three times
    /// the token client's timeout plus 60 s (150 s by default), from the time it claims and at most
    /// from when this session first saw it; past that, the refresh it marks ended without saving
    /// (its instance died), and the session refreshes itself.
    public var inFlightRefreshWait: TimeInterval = 10
    /// Where requests, refreshes and logouts are logged (label `oidc.session` by convention); a
    /// logger that discards everything unless one was given. Each line carries the login's `issuer`
    /// once it is loaded.
    public nonisolated let logger: Logger

    /// Session events over the session's lifetime; the latest 64 are buffered until read. Read it
    /// from one task: an `AsyncStream` hands each event to one of its iterators, so several
    /// observers would each see only some of the events.
    public nonisolated let events: AsyncStream<SessionEvent>
    private let eventSink: AsyncStream<SessionEvent>.Continuation
    private weak var delegate: (any AuthenticatedSessionDelegate)?
    private let now: @Sendable () -> Date

    private var current: StoredLogin?
    private var loaded = false
    /// Bumped by every logout: a refresh or load that started before it must not bring the login back.
    private var generation = 0
    /// Refreshed tokens the store could not keep (a full disk, a lost lock): used, and saved again
    /// next time, because the refresh token they replace is already spent.
    private var unsaved: StoredLogin?
    /// The refresh token that ``unsaved`` replaces: they are saved only over a login that still
    /// holds it, never over a login deleted or replaced meanwhile. `nil`: the host's tokens, saved
    /// over whatever is stored.
    private var unsavedReplaces: Secret?
    /// The ids of the latest refreshes this session marked in flight: ended, never waited for.
    private var ownMarks: [String] = []
    /// Another instance's mark this session found, and when (by ``now``) it first did: a mark
    /// counts for one window from then at most, whatever time it claims (a clock far ahead).
    private var foreignMarkSeen: (id: String, at: Date)?
    /// Why the last save of refreshed tokens failed, while they wait to be saved again; the tokens
    /// were still returned. `nil` once a save succeeds.
    public private(set) var storageProblem: OIDCError?
    private var refreshTask: Task<StoredLogin, any Error>?
    /// Counts the refreshes started: tells a finishing refresh whether it is still ``refreshTask``.
    private var refreshCount = 0
    /// Whether ``refreshTask`` only saves again tokens the store refused (it refreshes nothing).
    private var refreshTaskSavesOnly = false
    private var hostRetryAfter: Date?
    private var idTokenKeys: JWKSCache?
    private var hostUnauthenticated = false

    /// A session over the login stored under `key` in `store`; nothing is read before the first use.
    ///
    /// - Parameters:
    ///   - store: where the login is kept and locked.
    ///   - key: the login's key.
    ///   - source: where new tokens come from.
    ///   - transport: sends the resource requests.
    ///   - allowlist: the hosts that may receive the bearer token.
    ///   - now: the clock for expiry decisions (injectable for tests).
    ///   - logger: where requests, refreshes and logouts are logged, never with a token; `nil` (the
    ///     default) logs nothing.
    public init(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger? = nil
    ) {
        self.logger = logger ?? OIDCLog.session
        self.store = store
        self.key = key
        self.source = source
        self.transport = transport
        self.allowlist = allowlist
        self.now = now
        (events, eventSink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit { eventSink.finish() }

    /// The session of the last logged-in user kept under `key`, or `nil` when there is none
    /// (the Schibsted SDK's `resumeLastLoggedInUser`).
    ///
    /// - Parameters:
    ///   - store: where the login is kept and locked.
    ///   - key: the login's key.
    ///   - source: where new tokens come from.
    ///   - transport: sends the resource requests.
    ///   - allowlist: the hosts that may receive the bearer token.
    ///   - logger: the session's ``logger``; `nil` (the default) logs nothing.
    public static func resumeLastLoggedInUser(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist,
        logger: Logger? = nil
    ) async throws -> AuthenticatedSession? {
        guard try await store.load(key) != nil else { return nil }
        return AuthenticatedSession(store: store, key: key, source: source, transport: transport, allowlist: allowlist, logger: logger)
    }

    /// Sets the delegate told about logouts, or removes it with `nil`; the session holds it weakly.
    public func setDelegate(_ delegate: (any AuthenticatedSessionDelegate)?) { self.delegate = delegate }

    /// Verifies the ID tokens that refreshes bring with the provider's keys (OIDC Core §12.2: same
    /// issuer and subject, this client, the new access token's `at_hash`). Without keys, a refreshed
    /// ID token is never stored: the one verified at login is kept.
    public func verifyRefreshedIDTokens(with keys: JWKSCache) { idTokenKeys = keys }

    /// Sets ``refreshMargin``, in seconds.
    public func setRefreshMargin(_ seconds: TimeInterval) { refreshMargin = seconds }

    /// Sets ``requestOptions``, the limits of the resource requests.
    public func setRequestOptions(_ options: HTTPRequestOptions) { requestOptions = options }

    /// Clamped to 0...86 400 seconds; a value that is not a finite number keeps the default (60 s).
    public func setTemporarilyUnavailableDelay(_ seconds: TimeInterval) { temporarilyUnavailableDelay = seconds }

    /// Sets ``inFlightRefreshWait``, in seconds: clamped to 0...300 when used; a value that is not
    /// a finite number keeps the default (10 s).
    public func setInFlightRefreshWait(_ seconds: TimeInterval) { inFlightRefreshWait = seconds }

    /// ``inFlightRefreshWait`` as it is used.
    private var clampedInFlightWait: TimeInterval {
        inFlightRefreshWait.isFinite ? min(max(inFlightRefreshWait, 0), 300) : 10
    }

    /// ``temporarilyUnavailableDelay`` as it is used: within 0...86 400 s, 60 s when not finite.
    private var clampedUnavailableDelay: TimeInterval {
        temporarilyUnavailableDelay.isFinite ? min(max(temporarilyUnavailableDelay, 0), 86_400) : 60
    }

    /// The stored login, if any (read from the store once, then kept).
    public var login: StoredLogin? {
        get async throws {
            try await loadIfNeeded()
            return current
        }
    }

    // MARK: Requests

    /// Sends `request` with the bearer token; on a 401, refreshes once and retries once.
    ///
    /// - Throws: ``OIDCError/Code/hostNotAllowed`` before anything is sent for a host off the
    ///   allowlist or plain http off loopback; ``OIDCError/Code/notLoggedIn``;
    ///   ``OIDCError/Code/unauthorized`` when the resource still answers 401 after the refresh;
    ///   the refresh's errors (a rejected refresh has logged the user out; a transient one has not);
    ///   the transport's errors.
    public func send(_ request: HTTPRequest) async throws(OIDCError) -> HTTPResponse {
        do { try allowlist.check(request.url) } catch {
            logger.notice("bearer token withheld from a host off the allowlist", metadata: ["url": .endpoint(request.url), "error": .code(error)])
            throw error
        }
        let tokens = try await validTokens()
        let response = try await transport.send(Self.authorized(request, tokens.accessToken), options: requestOptions)
        logger.trace(
            "resource answered", metadata: lineMetadata(["url": .endpoint(request.url), "status": .int(response.status), "attempt": .int(1)])
        )
        guard response.status == 401 else { return response }
        logger.debug("resource refused the access token (401); refreshing once", metadata: lineMetadata(["url": .endpoint(request.url)]))
        let fresh = try await refresh(replacing: tokens.accessToken, reason: "unauthorized").tokens
        let retried = try await transport.send(Self.authorized(request, fresh.accessToken), options: requestOptions)
        logger.debug(
            "resource answered the retry", metadata: lineMetadata(["url": .endpoint(request.url), "status": .int(retried.status), "attempt": .int(2)])
        )
        guard retried.status == 401 else { return retried }
        throw OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(request.url)) refused a freshly refreshed token (401); the token lacks rights there, or the resource trusts another issuer.",
            context: ["status": "401"]
        )
    }

    /// Tokens whose access token is valid for at least ``refreshMargin`` more seconds (or of
    /// unknown expiry), refreshed first if needed; with `forceRefresh`, refreshed in any case.
    public func validTokens(forceRefresh: Bool = false) async throws(OIDCError) -> TokenSet {
        try await loadIfNeeded()
        if unsaved != nil, refreshTask == nil {
            // Refreshed tokens the store could not keep: try again, under the lock, before anything else.
            _ = try? await refresh(replacing: nil, saveOnly: true)
        }
        if let current, !forceRefresh, !current.tokens.needsRefresh(at: now(), margin: refreshMargin) {
            return current.tokens
        }
        return try await refresh(replacing: current?.tokens.accessToken, reason: forceRefresh ? "forced" : current == nil ? "not_loaded" : "expiring").tokens
    }

    /// Asks for new tokens now: after the host's token provider said "unauthenticated" (another user
    /// signed in), this is what makes the session ask it again.
    @discardableResult
    public func refreshToken() async throws(OIDCError) -> TokenSet {
        hostUnauthenticated = false
        hostRetryAfter = nil
        return try await validTokens(forceRefresh: true)
    }

    /// Logs the user out: revokes the refresh token when the provider can (best effort), deletes the
    /// stored login, tells the observers.
    ///
    /// The token revoked is the one the store holds, read under the store's lock: another process
    /// may have rotated the refresh token since this session read it, and revoking the spent one
    /// would do nothing (RFC 7009 §2.2) while the live one stayed valid after "logout".
    public func logout(revoke: Bool = true) async throws(OIDCError) {
        // A refresh in flight finishes first, so it cannot bring the login back afterwards.
        if let refreshTask { _ = await refreshTask.result }
        logger.debug("logging out", metadata: lineMetadata(["revoke": .bool(revoke)]))
        do {
            let asked = ContinuousClock.now
            try await store.withLock(key) {
                await self.logLockWait(since: asked)
                if revoke { await self.revokeStoredTokens() }
                try await self.endLogin(.userInitiated)
            }
        } catch let error as OIDCError {
            throw error
        } catch {
            throw OIDCError(.storageFailure, "The token store failed (\(type(of: error))).")
        }
    }

    // MARK: Refresh

    private func loadIfNeeded() async throws(OIDCError) {
        guard !loaded else { return }
        let stored = try await storage { try await self.store.load(self.key) }
        // Someone else may have loaded, refreshed or logged out while this load was waiting.
        guard !loaded else { return }
        current = stored?.marked(nil)
        loaded = true
    }

    /// One refresh for everyone: callers during a refresh wait for it; callers after it, whose
    /// token was already replaced, get the new one without another refresh.
    private func refresh(replacing stale: Secret?, saveOnly: Bool = false, reason: String = "expiring") async throws(OIDCError) -> StoredLogin {
        if let running = refreshTask {
            logger.trace("joining the refresh in flight", metadata: lineMetadata(["reason": .string(reason)]))
            let runningSavesOnly = refreshTaskSavesOnly
            let result = try await Self.value(of: running)
            // A task that only saved again tokens the store had refused brings nothing new: a caller
            // whose token was just refused (a 401) still needs a refresh, once that save is done.
            guard !saveOnly, runningSavesOnly, let stale, result.tokens.accessToken == stale else { return result }
            return try await refresh(replacing: stale, reason: reason)
        }
        if let current, let stale, current.tokens.accessToken != stale, !current.tokens.needsRefresh(at: now(), margin: refreshMargin) {
            return current
        }
        // A caller cancelled already does not start a refresh it would not wait for.
        if Task.isCancelled { throw OIDCError(.cancelled, "Cancelled before the tokens were refreshed.") }
        refreshCount += 1
        let number = refreshCount
        // Isolated to this actor: it starts once this method waits for it, and it, not its caller
        // (who may be cancelled and stop waiting), ends its turn as the refresh in flight.
        let task = Task {
            defer { if self.refreshCount == number { self.refreshTask = nil } }
            return try await self.refreshUnderLock(replacing: stale, saveOnly: saveOnly, reason: reason)
        }
        refreshTask = task
        refreshTaskSavesOnly = saveOnly
        return try await Self.value(of: task)
    }

    /// What a refresh under the lock came to.
    private enum LockedRefresh: Sendable {
        /// The login to use.
        case done(StoredLogin)
        /// Another instance's refresh is marked in flight for this many more seconds at most.
        case inFlightElsewhere(TimeInterval)
    }

    private func refreshUnderLock(replacing stale: Secret?, saveOnly: Bool, reason: String) async throws -> StoredLogin {
        var stale = stale
        let began = ContinuousClock.now
        var pause = Duration.milliseconds(25)
        // Bounded: each round that waits for another instance sleeps first, and those rounds end
        // after `inFlightRefreshWait`; a login adopted from the store starts one more round, once.
        while true {
            let asked = ContinuousClock.now, replacing = stale
            let outcome = try await store.withLock(key) {
                await self.logLockWait(since: asked)
                return try await self.refreshLocked(replacing: replacing, saveOnly: saveOnly, reason: reason)
            }
            switch outcome {
            case .done(let login):
                // Refused on a lost lock: another instance may be waiting for these tokens. Save
                // them now under a new lock (not nested in the one just released).
                guard unsaved != nil, !saveOnly, store.lockCanBeLost else { return login }
                guard let adopted = try await saveUnsavedUnderNewLock() else { return login }
                // The store holds another login than the one refreshed (a new login meanwhile):
                // that one is this session's now, refreshed if it needs to be.
                if !adopted.tokens.needsRefresh(at: now(), margin: refreshMargin) { return adopted }
                stale = adopted.tokens.accessToken
            case .inFlightElsewhere(let remaining):
                let left = Duration.seconds(clampedInFlightWait) - (ContinuousClock.now - began)
                guard left > .zero else { throw Self.refreshInFlightElsewhere(remaining) }
                logger.debug(
                    "another instance's refresh of this login is in flight; waiting for its tokens",
                    metadata: lineMetadata(["retry_after_s": .seconds(remaining)]))
                do { try await Task.sleep(for: min(pause, left, .seconds(remaining))) } catch {
                    throw OIDCError(.cancelled, "Cancelled while waiting for another instance's refresh of this login.")
                }
                pause = min(pause * 2, .seconds(1))
            }
        }
    }

    private static func refreshInFlightElsewhere(_ remaining: TimeInterval) -> OIDCError {
        let seconds = String(Int(remaining.rounded(.up)))
        return OIDCError(
            .temporarilyUnavailable,
            "Another instance is refreshing this login: its lock on the token store was lost while its refresh was at the provider, and its new tokens have not reached the store yet. The login is kept; try again in \(seconds) s, by which time the tokens are saved or that refresh counts as failed.",
            context: ["retryAfter": seconds])
    }

    /// How long a refresh marked in flight may be under way, from the mark to the save of its
    /// tokens: three times the token client's timeout (the provider's answer, then a fetch and a
    /// refetch of the keys that verify a refreshed ID token) plus 60 s (the save, and a new lock
    /// when the first was lost, at ``PostgresTokenStore``'s default timeouts; and clocks of a fleet
    /// that disagree). 150 s with the default 30 s timeout.
    static func inFlightWindow(_ client: TokenClient) -> TimeInterval {
        let timeout = client.requestOptions.timeout.components
        return 3 * (TimeInterval(timeout.seconds) + TimeInterval(timeout.attoseconds) / 1e18) + 60
    }

    /// How much longer `mark`, another instance's, counts as a refresh in flight: one window from
    /// the time it claims, and at most one window from when this session first saw it.
    private func remaining(of mark: RefreshMark, window: TimeInterval) -> TimeInterval {
        let now = now()
        if foreignMarkSeen?.id != mark.id { foreignMarkSeen = (mark.id, now) }
        let firstSeen = foreignMarkSeen?.at ?? now
        return min(mark.remaining(at: now, window: window), max(firstSeen.addingTimeInterval(window).timeIntervalSince(now), 0))
    }

    /// Saves ``unsaved`` under a new lock at once, over the login they replace only; the login
    /// the store holds instead, when it holds another one (`nil` otherwise).
    private func saveUnsavedUnderNewLock() async throws(OIDCError) -> StoredLogin? {
        do {
            let result = try await storage { try await self.store.withLock(self.key) { try await self.reconcileUnsaved() } }
            return result.adopted ? result.login?.marked(nil) : nil
        } catch where error.code == .notLoggedIn {
            throw error
        } catch {
            storageProblem = error
            logger.warning("the store still refuses the refreshed tokens; they stay in memory", metadata: lineMetadata(.failure(error)))
            return nil
        }
    }

    /// Under the lock: saves ``unsaved`` when the store still holds the login they replace, and
    /// returns the login for this session to go on with (as stored, with any refresh mark):
    /// `adopted` when it is another login the store holds instead.
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` when the login was deleted meanwhile (another
    ///   instance logged out): the refreshed tokens are revoked (best effort), not saved.
    private func reconcileUnsaved() async throws(OIDCError) -> (login: StoredLogin?, adopted: Bool) {
        let row = try await storage { try await self.store.load(self.key) }
        guard let pending = unsaved else { return (row, false) }
        if let replaced = unsavedReplaces, row?.tokens.refreshToken != replaced {
            unsaved = nil
            unsavedReplaces = nil
            storageProblem = nil
            guard let row else {
                generation += 1
                current = nil
                loaded = true
                logger.notice("the login was deleted while its refreshed tokens waited to be saved; not saved, revoked", metadata: lineMetadata())
                await revoke(pending.tokens)
                throw OIDCError(
                    .notLoggedIn,
                    "The login was deleted from the store (logged out elsewhere) while its refreshed tokens waited to be saved; they were discarded, not saved. Log in again.")
            }
            logger.notice("the store holds other tokens than those the refreshed tokens replace; using the store's", metadata: lineMetadata())
            current = row.marked(nil)
            return (row, true)
        }
        do {
            try await storage { try await self.store.save(pending, for: self.key) }
            unsaved = nil
            unsavedReplaces = nil
            storageProblem = nil
            logger.notice("refreshed tokens the store had refused are saved now", metadata: lineMetadata())
        } catch {
            storageProblem = error
            logger.warning("the store still refuses the refreshed tokens; they stay in memory", metadata: lineMetadata(.failure(error)))
        }
        // While they stay unsaved, they are the live ones: the stored refresh token is spent.
        return (pending, false)
    }

    /// OAuth errors that mean this login's refresh is rejected for good (RFC 6749 §5.2): the grant
    /// (refresh token) is dead, or the client is refused. Anything else keeps the user in: a 5xx, a
    /// timeout, an HTML page from a proxy, a broken body, and also `invalid_request`, `invalid_scope`,
    /// `unauthorized_client` or `unsupported_grant_type`, which say the request was wrong, not the
    /// login, and which an intermediary can forge as easily as an HTML page.
    static let rejectingErrors: Set<String> = ["invalid_grant", "invalid_client"]

    /// Under the store's lock: re-read, adopt tokens another process rotated, else refresh.
    private func refreshLocked(replacing stale: Secret?, saveOnly: Bool = false, reason: String) async throws(OIDCError) -> LockedRefresh {
        let startedIn = generation
        // Our refreshed tokens that the store could not keep are saved first, if the store still
        // holds the login they replace.
        let row: StoredLogin?
        if unsaved != nil { row = try await reconcileUnsaved().login } else { row = try await storage { try await self.store.load(self.key) } }
        guard generation == startedIn else { throw Self.loggedOutMeanwhile }
        let foreignMark = row?.refreshMark.flatMap { ownMarks.contains($0.id) ? nil : $0 }
        let stored = row?.marked(nil)
        current = stored
        if saveOnly, let stored { return .done(stored) }
        if let stored, stored.tokens.accessToken != stale, !stored.tokens.needsRefresh(at: now(), margin: refreshMargin) {
            logger.debug("using tokens another process refreshed", metadata: lineMetadata(["expires_at": expiry(stored.tokens)]))
            eventSink.yield(.tokensRefreshed)
            return .done(stored)
        }
        switch source {
        case .refreshToken(let client):
            guard let stored else {
                throw OIDCError(.notLoggedIn, "Nobody is logged in under \(key); log in first.")
            }
            guard let refreshToken = stored.tokens.refreshToken else {
                // Nothing to refresh with: the login stays until it has really expired or is replaced.
                if stored.tokens.accessToken != stale, !stored.tokens.isExpired(at: now()) { return .done(stored) }
                throw OIDCError(.notLoggedIn, "The access token is expired or refused and the login has no refresh token; log in again.")
            }
            var mark: RefreshMark?
            if store.lockCanBeLost {
                if var foreignMark {
                    // Another instance's lock was lost while its refresh was at the provider: the
                    // stored refresh token may be spent, its replacement on the way to the store.
                    if foreignMark.began > now() {
                        // Dated ahead of this clock: dated now instead, in the row, so that every
                        // session counts its window from here (best effort; its owner's save
                        // replaces the row in any case).
                        foreignMark = RefreshMark(id: foreignMark.id, began: now())
                        try? await storage { try await self.store.save(stored.marked(foreignMark), for: self.key) }
                    }
                    let remaining = remaining(of: foreignMark, window: Self.inFlightWindow(client))
                    if remaining > 0 { return .inFlightElsewhere(remaining) }
                    logger.notice(
                        "another instance's refresh of this login was marked in flight longer than a refresh takes; refreshing",
                        metadata: lineMetadata())
                }
                // Marked before the refresh token is sent, under the lock (and refused if the lock
                // is lost already): an instance taking this lock if it is lost waits for this refresh.
                let new = try RefreshMark.new(at: now())
                // Known as this session's before the save: a save that committed but reported a
                // failure (a broken connection) must not leave a mark this session waits for.
                ownMarks = Array((ownMarks + [new.id]).suffix(8))
                do { try await storage { try await self.store.save(stored.marked(new), for: self.key) } } catch {
                    // It may have been committed all the same (a connection that broke after the
                    // commit): take it back, best effort, so that nobody waits for a refresh not sent.
                    if unsaved == nil { await removeMark(from: stored) }
                    throw error
                }
                mark = new
                if unsaved != nil {
                    // `stored` was the refreshed tokens the store had refused: saved now, with the mark.
                    unsaved = nil
                    unsavedReplaces = nil
                    storageProblem = nil
                }
            }
            let answer: TokenSet
            logger.debug("refreshing tokens", metadata: lineMetadata(["grant_type": "refresh_token", "reason": .string(reason)]))
            let started = ContinuousClock.now
            do { answer = try await client.refresh(refreshToken) } catch {
                if error.code == .providerError, let oauth = error.providerError, Self.rejectingErrors.contains(oauth.error),
                    generation == startedIn
                {
                    logger.notice("refresh rejected by the provider; logging out", metadata: lineMetadata(.failure(error)))
                    try await endLogin(.refreshRejected(error.providerError))
                } else {
                    logger.warning("refresh failed; the login is kept and the next call tries again", metadata: lineMetadata(.failure(error)))
                    if mark != nil { await removeMark(from: stored) }
                }
                throw error
            }
            guard generation == startedIn else { throw Self.loggedOutMeanwhile }
            var refreshed = stored
            refreshed.tokens = stored.tokens.refreshed(with: await checkedIDToken(in: answer, for: stored, client: client))
            logger.debug(
                "tokens refreshed",
                metadata: lineMetadata([
                    "grant_type": "refresh_token", "duration_ms": .milliseconds(since: started), "expires_at": expiry(refreshed.tokens),
                    "refresh_token_rotated": .bool(answer.refreshToken != nil && answer.refreshToken != refreshToken),
                    "id_token": .string(answer.idToken == nil ? "none" : refreshed.tokens.idToken == answer.idToken ? "verified" : "dropped"),
                ])
            )
            await keep(refreshed, replacing: refreshToken)
            return .done(refreshed)
        case .host(let provide):
            guard !hostUnauthenticated else {
                throw OIDCError(.notLoggedIn, "The host application said nobody is signed in; call refreshToken() when someone is.")
            }
            if let hostRetryAfter, now() < hostRetryAfter {
                throw OIDCError(
                    .temporarilyUnavailable, "The host application's token provider is temporarily unavailable; try again after \(hostRetryAfter.formatted(.iso8601)).",
                    context: ["retryAfter": String(Int(hostRetryAfter.timeIntervalSince(now()).rounded(.up)))]
                )
            }
            logger.debug("asking the host application for tokens", metadata: lineMetadata(["reason": .string(reason)]))
            switch await provide() {
            case .token(let tokens):
                guard generation == startedIn else { throw Self.loggedOutMeanwhile }
                hostRetryAfter = nil
                let login = StoredLogin(
                    tokens: tokens, issuer: stored?.issuer ?? "", clientID: stored?.clientID ?? "", subject: stored?.subject,
                    attributes: stored?.attributes ?? [:]
                )
                await keep(login, replacing: nil)
                return .done(login)
            case .temporarilyUnavailable(let delay):
                // A delay that is not a sensible number of seconds gets the default.
                let seconds = delay.flatMap { $0.isFinite && $0 >= 0 && $0 <= 86_400 ? $0 : nil } ?? clampedUnavailableDelay
                hostRetryAfter = now().addingTimeInterval(seconds)
                logger.notice("the host's token provider is temporarily unavailable", metadata: lineMetadata(["retry_after_s": .seconds(seconds)]))
                throw OIDCError(
                    .temporarilyUnavailable, "The host application's token provider is temporarily unavailable; the session asks again in \(Int(seconds.rounded(.up))) s.",
                    context: ["retryAfter": String(Int(seconds.rounded(.up)))]
                )
            case .unauthenticated:
                hostUnauthenticated = true
                try await endLogin(.unauthenticated)
                throw OIDCError(.notLoggedIn, "The host application said nobody is signed in.")
            }
        }
    }

    /// `answer` with its ID token if it verifies as a refreshed ID token of `login`, else without.
    private func checkedIDToken(in answer: TokenSet, for login: StoredLogin, client: TokenClient) async -> TokenSet {
        guard let idToken = answer.idToken else { return answer }
        var answer = answer
        answer.idToken = nil
        guard let idTokenKeys else { return answer }
        var verifier = IDTokenVerifier(issuer: login.issuer, clientID: login.clientID, nonce: .notChecked)
        verifier.issuerMatching = client.provider.issuerMatching
        verifier.accessToken = answer.accessToken
        do {
            // OIDC Core §12.2: the same user as at login, who logged in at the same time.
            guard let subject = login.subject else {
                throw OIDCError(
                    .invalidClaim, "The stored login names no subject, so a refreshed ID token cannot be tied to its user; the login's own is kept.",
                    context: ["claim": "sub"]
                )
            }
            let verified = try await verifier.verify(idToken.revealedValue, keys: idTokenKeys, now: now())
            if verified.claims.subject != subject {
                throw OIDCError(.invalidClaim, "The refreshed ID token is about another user (sub differs).", context: ["claim": "sub"])
            }
            let original = login.tokens.idToken.flatMap { try? UnverifiedJWT($0.revealedValue) }?.claims["auth_time"]?.numberValue
            if let original, let renewed = verified.claims.authTime, renewed.timeIntervalSince1970 != original {
                throw OIDCError(
                    .invalidClaim, "The refreshed ID token's auth_time is not the original authentication's (OIDC Core §12.2).",
                    context: ["claim": "auth_time"]
                )
            }
            answer.idToken = idToken
        } catch {
            let failure = error as? OIDCError ?? OIDCError(.keyNotFound, "The provider's keys could not be fetched.")
            logger.warning("refreshed ID token failed verification; the login's own is kept", metadata: lineMetadata(.failure(failure)))
            eventSink.yield(.refreshedIDTokenRejected(failure))
        }
        return answer
    }

    /// Makes `login` current and saves it; when the save fails, the tokens are used anyway (the
    /// refresh token they replace is spent), ``storageProblem`` says why, and they are saved again
    /// later over the login holding `spent` only (over anything for `nil`).
    private func keep(_ login: StoredLogin, replacing spent: Secret?) async {
        current = login
        eventSink.yield(.tokensRefreshed)
        do {
            try await storage { try await self.store.save(login, for: self.key) }
            unsaved = nil
            unsavedReplaces = nil
            storageProblem = nil
        } catch {
            // When the refreshed tokens were themselves unsaved ones, the store still holds the
            // login those replaced: that is what these are saved over.
            if unsaved == nil { unsavedReplaces = spent }
            unsaved = login
            storageProblem = error
            logger.warning("the store refused the refreshed tokens; they are used, and saved again next time", metadata: lineMetadata(.failure(error)))
        }
    }

    /// Under the lock, after a refresh failed for a transient reason: puts `login` back without
    /// this refresh's mark, so that other instances do not wait for it; best effort (a mark left
    /// behind expires).
    private func removeMark(from login: StoredLogin) async {
        do { try await storage { try await self.store.save(login, for: self.key) } } catch {
            logger.warning(
                "the failed refresh's in-flight mark could not be removed; other instances wait for it until it expires",
                metadata: lineMetadata(.failure(error)))
        }
    }

    private static let loggedOutMeanwhile = OIDCError(.notLoggedIn, "The user was logged out while the tokens were being refreshed.")

    /// Under the store's lock: revokes the stored refresh token (or access token), best effort.
    private func revokeStoredTokens() async {
        let stored = (try? await store.load(key)) ?? nil
        guard let tokens = (unsaved ?? stored ?? current)?.tokens else { return }
        await revoke(tokens)
    }

    /// Revokes the refresh token of `tokens` (or their access token), best effort.
    private func revoke(_ tokens: TokenSet) async {
        guard case .refreshToken(let client) = source, client.provider.revocationEndpoint != nil else { return }
        do {
            try await client.revoke(tokens.refreshToken ?? tokens.accessToken, hint: tokens.refreshToken == nil ? .accessToken : .refreshToken)
            logger.debug("revoked the stored token", metadata: lineMetadata(["token_type_hint": .string(tokens.refreshToken == nil ? "access_token" : "refresh_token")]))
        } catch {
            // Best effort: the login is deleted anyway.
            logger.notice("revocation failed; the login is deleted anyway", metadata: lineMetadata(.failure(error)))
        }
    }

    private func endLogin(_ reason: LogoutReason) async throws(OIDCError) {
        generation += 1
        unsaved = nil
        unsavedReplaces = nil
        // Built only inside the log calls' autoclosures, so only for a level the handler takes.
        func metadata() -> Logger.Metadata { lineMetadata(["reason": .string(Self.name(of: reason))]) }
        do { try await storage { try await self.store.delete(self.key) } } catch {
            logger.warning("the store failed to delete the login at logout", metadata: metadata().merging(.failure(error)) { $1 })
            throw error
        }
        if case .userInitiated = reason {
            logger.debug("logged out", metadata: metadata())
        } else {
            logger.notice("logged out", metadata: metadata())
        }
        current = nil
        loaded = true
        eventSink.yield(.loggedOut(reason))
        delegate?.userDidLogout(reason: reason)
    }

    // MARK: Helpers

    /// `metadata` with the login's issuer and the store key's account (a profile or user name,
    /// never a secret), when known.
    private func lineMetadata(_ metadata: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = metadata
        if let issuer = current?.issuer, !issuer.isEmpty { metadata["issuer"] = .issuer(issuer) }
        metadata["account"] = .untrusted(key.account, limit: 128)  // room for a hashed account: sha256: and 64 hex digits
        return metadata
    }

    private func expiry(_ tokens: TokenSet) -> Logger.MetadataValue {
        tokens.expiresAt.map { .instant($0) } ?? "unknown"
    }

    /// Logs how long the store's lock took, once held: `trace` when it was free, `debug` when
    /// another holder (a process, a task) made this one wait.
    private func logLockWait(since asked: ContinuousClock.Instant) {
        let waited = ContinuousClock.now - asked
        let level: Logger.Level = waited > .milliseconds(5) ? .debug : .trace
        logger.log(level: level, "store lock held", metadata: lineMetadata(["wait_ms": .stringConvertible(LogRedaction.milliseconds(waited))]))
    }

    private static func name(of reason: LogoutReason) -> String {
        switch reason {
        case .refreshRejected: "refresh_rejected"
        case .noRefreshToken: "no_refresh_token"
        case .unauthenticated: "unauthenticated"
        case .userInitiated: "user_initiated"
        }
    }

    private static func authorized(_ request: HTTPRequest, _ token: Secret) -> HTTPRequest {
        var request = request
        request.headers.set("Authorization", "Bearer " + token.revealedValue)
        return request
    }

    /// The shared refresh's login. A caller cancelled while it runs stops waiting, with
    /// ``OIDCError/Code/cancelled``; the refresh goes on, and its tokens are kept for the next call.
    private static func value(of task: Task<StoredLogin, any Error>) async throws(OIDCError) -> StoredLogin {
        do { return try await SharedTaskWait.value(of: task) } catch let error as OIDCError { throw error } catch is CancellationError {
            throw OIDCError(.cancelled, "Cancelled while the tokens were being refreshed; the refresh goes on, and the next call uses its tokens.")
        } catch {
            throw OIDCError(.storageFailure, "The token store failed (\(type(of: error))).")
        }
    }

    /// Runs a store operation; errors that are not ``OIDCError``s become `storageFailure`.
    private func storage<T>(_ body: () async throws -> T) async throws(OIDCError) -> T {
        do { return try await body() } catch let error as OIDCError { throw error } catch {
            // A custom store's error text is not ours to print: it might carry anything.
            throw OIDCError(.storageFailure, "The token store failed (\(type(of: error))).")
        }
    }
}
