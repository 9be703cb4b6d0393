public import Foundation
public import Logging

/// Performs requests with `Authorization: Bearer <access token>` (RFC 6750), or `Authorization:
/// DPoP` with a fresh proof for a DPoP-bound login (RFC 9449), and keeps the token fresh.
///
/// - The token goes only to hosts on the ``HostAllowlist``, over https (http only to loopback).
/// - It is refreshed shortly before it expires, and on a 401 from the resource: once, then the
///   request is retried once. A request never loops.
/// - Concurrent callers share one refresh; across processes the refresh runs under the store's
///   lock and re-reads the store first, so tokens another process already rotated are used, not
///   spent again. A caller cancelled meanwhile stops waiting at once; the refresh goes on.
/// - A refresh the provider rejects (`invalid_grant`) logs the user out: the stored login is
///   deleted, ``events`` and the delegate are told, and the error says so (``OIDCError/endsLogin``).
///   A transient failure (network, 5xx, timeout) logs nobody out, nor does `invalid_client` (the
///   client's credentials are wrong, not the login: fixed, they refresh the same login).
/// - With a store whose lock can be lost (a database), each refresh is marked in flight in the
///   stored login first, so that no other instance spends the same refresh token (<doc:LostLocks>).
///
/// ```swift
/// let session = relyingParty.session(store: keychain, key: key, allowlist: .default(for: api))
/// let response = try await session.send(HTTPRequest(url: api.appending(path: "me")))
/// ```
///
/// With a ``logger``: requests, refreshes, lock waits and adopted tokens at `debug`/`trace`; a
/// logout after a rejected refresh at `notice`; a refresh that failed for a transient reason, tokens
/// the store refused, and a refreshed ID token that failed verification at `warning`. Never a token
/// or an `Authorization` header (see <doc:Logging>).
public actor AuthenticatedSession {
    /// Where the login is kept; refreshes run under its lock.
    public nonisolated let store: any TokenStore
    /// The login's key in ``store``.
    public nonisolated let key: TokenStoreKey
    /// Where new tokens come from.
    public nonisolated let source: TokenSource
    /// Sends the resource requests.
    public nonisolated let transport: any HTTPTransport
    /// The hosts that may receive the bearer token.
    public nonisolated let allowlist: HostAllowlist
    /// The session's options, as validated at initialization (``Options/validated``).
    public internal(set) var options: Options
    /// Where requests, refreshes and logouts are logged (label `oidc.session` by convention); a
    /// logger that discards everything unless one was given. Each line carries the login's `issuer`
    /// once it is loaded.
    public nonisolated let logger: Logger

    /// Session events over the session's lifetime; the latest 64 are buffered until read. Read it
    /// from one task: an `AsyncStream` hands each event to one of its iterators, so several
    /// observers would each see only some of the events.
    public nonisolated let events: AsyncStream<SessionEvent>
    let eventSink: AsyncStream<SessionEvent>.Continuation
    weak var delegate: (any AuthenticatedSessionDelegate)?
    let now: @Sendable () -> Date

    /// The login in use, as last read or refreshed (never with a refresh mark).
    var current: StoredLogin?
    var loaded = false
    /// Bumped by every logout: a refresh or load that started before it must not bring the login back.
    var generation = 0
    /// Refreshed tokens the store could not keep, until a save succeeds.
    var unsaved: UnsavedTokens?
    /// This session's refresh marks, and the other instance's mark it found.
    var marks = RefreshMarkTracker()
    /// The refresh in flight (one key: this session's login).
    var refreshes = SingleFlight<Int, StoredLogin>()
    /// Whether the refresh in flight only saves again tokens the store refused (it refreshes nothing).
    var refreshSavesOnly = false
    /// What the host application's token provider said last.
    var host = HostSourceState()
    /// The DPoP nonces of the resource servers and the token endpoint, for DPoP-bound logins: its
    /// relying party's, shared by all its sessions. A program that keeps them between processes
    /// reads and seeds them here (`oidc request`).
    package nonisolated let dpopNonces: DPoPNonces

    /// Why the last save of refreshed tokens failed, while they wait to be saved again; the tokens
    /// were still returned. `nil` once a save succeeds.
    public var storageProblem: OIDCError? { unsaved?.problem }

    /// A session over the login stored under `key` in `store`; nothing is read before the first use.
    /// ``RelyingParty/session(store:key:allowlist:options:)`` makes one for a relying party.
    ///
    /// - Parameters:
    ///   - store: where the login is kept and locked.
    ///   - key: the login's key.
    ///   - source: where new tokens come from.
    ///   - transport: sends the resource requests.
    ///   - allowlist: the hosts that may receive the bearer token.
    ///   - options: margins, limits and the keys for refreshed ID tokens; brought into range once
    ///     (``Options/validated``).
    ///   - now: the clock for expiry decisions (injectable for tests).
    ///   - logger: where requests, refreshes and logouts are logged, never with a token; `nil` (the
    ///     default) logs nothing.
    public init(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist,
        options: Options = Options(), now: @escaping @Sendable () -> Date = { Date() }, logger: Logger? = nil
    ) {
        self.init(
            store: store, key: key, source: source, transport: transport, allowlist: allowlist, options: options, now: now, logger: logger,
            dpopNonces: DPoPNonces())
    }

    /// A session as ``init(store:key:source:transport:allowlist:options:now:logger:)`` makes one,
    /// with the servers' DPoP nonces in `dpopNonces`: its relying party's, so that the nonces its
    /// sessions and logins learn serve each other (the token endpoint's, learned at login, serves
    /// the first refresh).
    init(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist,
        options: Options, now: @escaping @Sendable () -> Date, logger: Logger?, dpopNonces: DPoPNonces
    ) {
        self.dpopNonces = dpopNonces
        self.logger = logger ?? OIDCLog.session
        self.store = store
        self.key = key
        self.source = source
        self.transport = transport
        self.allowlist = allowlist
        self.options = options.inRange
        self.now = now
        (events, eventSink) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit { eventSink.finish() }

    /// Sets the delegate told about logouts, or removes it with `nil`; the session holds it weakly.
    public func setDelegate(_ delegate: (any AuthenticatedSessionDelegate)?) { self.delegate = delegate }

    /// The stored login, if any (read from the store once, then kept).
    public var login: StoredLogin? {
        get async throws {
            try await loadIfNeeded()
            return current
        }
    }

    // MARK: Requests

    /// Sends `request` through the resource pipeline (<doc:Pipelines>): with the access token
    /// (bearer, or DPoP with a fresh proof for a DPoP-bound login); on a 401, refreshes once and
    /// retries once. A DPoP nonce challenge gets one retry with the new nonce and never a refresh.
    /// Your stages (``Options/stages``) see each request as it leaves.
    ///
    /// - Throws: ``OIDCError/Code/hostNotAllowed`` before anything is sent for a host off the
    ///   allowlist or plain http off loopback; ``OIDCError/Code/notLoggedIn`` (also for a
    ///   DPoP-bound login whose key is missing or another key: log in again);
    ///   ``OIDCError/Code/unauthorized`` when the resource still answers 401 after the refresh,
    ///   keeps asking for a DPoP nonce, or refuses the DPoP proof itself (`invalid_dpop_proof`: no
    ///   refresh, since new tokens would be proven the same way);
    ///   the refresh's errors (a rejected refresh has logged the user out; a transient one has not);
    ///   the transport's errors.
    public func send(_ request: HTTPRequest) async throws(OIDCError) -> HTTPResponse {
        try await sendThroughPipeline(request, transport: transport)
    }

    /// Sends `request` as ``send(_:)`` does, through the whole resource pipeline, with each attempt's
    /// last hop through `transport` instead of the session's own: the door for another HTTP client (an
    /// OpenAPI-generated client's transport, a framework's client). The token goes only where the
    /// allowlist lets it, checked before `transport` sees the request; `transport` sees each attempt
    /// with the `Authorization` and `DPoP` headers in it, and may be called twice (a nonce retry, a
    /// retry after the refresh), so it must be able to send the same request again.
    ///
    /// - Throws: as ``send(_:)``, with `transport`'s errors as the transport's.
    public func send(_ request: HTTPRequest, through transport: any HTTPTransport) async throws(OIDCError) -> HTTPResponse {
        try await sendThroughPipeline(request, transport: transport)
    }

    /// Tokens whose access token is valid for at least ``Options/refreshMargin`` more (or of
    /// unknown expiry), refreshed first if needed; with `forceRefresh`, refreshed in any case.
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` (``OIDCError/endsLogin``); the refresh's errors: a
    ///   rejected refresh has logged the user out (``OIDCError/endsLogin`` is `true`), a transient
    ///   one has not.
    public func validTokens(forceRefresh: Bool = false) async throws(OIDCError) -> TokenSet {
        try await validLogin(forceRefresh: forceRefresh).tokens
    }

    /// The login with tokens valid for ``Options/refreshMargin`` more, refreshed first when needed.
    func validLogin(forceRefresh: Bool = false) async throws(OIDCError) -> StoredLogin {
        try await loadIfNeeded()
        if unsaved != nil, !refreshes.isRunning(0) {
            // Refreshed tokens the store could not keep: try again, under the lock, before anything else.
            _ = try? await refresh(replacing: nil, saveOnly: true)
        }
        if let current, !forceRefresh, !current.tokens.needsRefresh(at: now(), margin: options.refreshMargin.timeInterval) {
            return current
        }
        return try await refresh(replacing: current?.tokens.accessToken, reason: forceRefresh ? "forced" : current == nil ? "not_loaded" : "expiring")
    }

    /// Asks for new tokens now: after the host's token provider said "unauthenticated" (another user
    /// signed in), this is what makes the session ask it again.
    @discardableResult
    public func refreshNow() async throws(OIDCError) -> TokenSet {
        host = HostSourceState()
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
        if let running = refreshes.task(for: 0) { _ = await running.result }
        logger.debug("logging out", metadata: lineMetadata(["revoke": .bool(revoke)]))
        let asked = ContinuousClock.now
        try await storage {
            try await self.store.withLock(self.key) {
                await self.logLockWait(since: asked)
                if revoke { await self.revokeStoredTokens() }
                try await self.endLogin(.userInitiated)
            }
        }
    }

    // MARK: Helpers

    func loadIfNeeded() async throws(OIDCError) {
        guard !loaded else { return }
        let stored = try await storage { try await self.store.load(self.key) }
        // Someone else may have loaded, refreshed or logged out while this load was waiting.
        guard !loaded else { return }
        if let stored { try requireOwnLogin(stored) }
        current = stored?.marked(nil)
        loaded = true
    }

    /// Refuses a login kept under ``key`` that is of another issuer or client than the source's
    /// token client: its refresh token (or its tokens) must not go to this provider, nor this
    /// client's credentials with them (a key shared by two providers, or by staging and production).
    /// Nothing is sent; the login is kept. A host application's source has no client to compare.
    func requireOwnLogin(_ login: StoredLogin) throws(OIDCError) {
        guard let client = source.tokenClient else { return }
        let provider = client.provider
        guard login.clientID != client.clientID || !provider.issuerMatching.matches(login.issuer, expected: provider.issuer) else { return }
        throw OIDCError(
            .invalidArgument,
            "The login kept under \(UntrustedText.sanitized(key.service, limit: 64))/\(UntrustedText.sanitized(key.account, limit: 128)) is of issuer \(UntrustedText.sanitized(login.issuer, limit: 200)) (client \(UntrustedText.sanitized(login.clientID, limit: 128))), and this session is for issuer \(provider.issuer) (client \(client.clientID)): nothing was sent, and that login is kept. Keep each issuer's and client's login under its own key.",
            context: ["issuer": login.issuer, "expectedIssuer": provider.issuer]
        )
    }

    /// `metadata` with the login's issuer and the store key's account (a profile or user name,
    /// never a secret), when known.
    func lineMetadata(_ metadata: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = metadata
        if let issuer = current?.issuer, !issuer.isEmpty { metadata["issuer"] = .issuer(issuer) }
        metadata["account"] = .untrusted(key.account, limit: 128)  // room for a hashed account: sha256: and 64 hex digits
        return metadata
    }

    func expiry(_ tokens: TokenSet) -> Logger.MetadataValue {
        tokens.expiresAt.map { .instant($0) } ?? "unknown"
    }

    /// Logs how long the store's lock took, once held: `trace` when it was free, `debug` when
    /// another holder (a process, a task) made this one wait.
    func logLockWait(since asked: ContinuousClock.Instant) {
        let waited = ContinuousClock.now - asked
        let level: Logger.Level = waited > .milliseconds(5) ? .debug : .trace
        logger.log(level: level, "store lock held", metadata: lineMetadata(["wait_ms": .stringConvertible(LogRedaction.milliseconds(waited))]))
    }

    /// Runs a store operation; errors that are not ``OIDCError``s become `storageFailure` (or
    /// `cancelled`, for a wait for the lock that was cancelled).
    func storage<T>(_ body: () async throws -> T) async throws(OIDCError) -> T {
        do { return try await body() } catch let error as OIDCError { throw error } catch {
            throw Self.storageFailure(error)
        }
    }

    /// A custom store's error as an ``OIDCError``: its text is not ours to print, it might carry anything.
    static func storageFailure(_ error: any Error) -> OIDCError {
        if error is CancellationError { return OIDCError(.cancelled, "Cancelled while waiting for the token store.") }
        return OIDCError(.storageFailure, "The token store failed (\(type(of: error))).")
    }
}
