public import Foundation

/// Performs requests with `Authorization: Bearer <access token>` and keeps the token fresh
/// (RFC 6750, DESIGN §7).
///
/// - The token goes only to hosts on the ``HostAllowlist``, over https (http only to loopback).
/// - It is refreshed shortly before it expires, and on a 401 from the resource: once, then the
///   request is retried once. A request never loops.
/// - Concurrent callers share one refresh. Across processes the refresh runs under the store's lock
///   and re-reads the store first, so tokens another process already rotated are used, not spent again.
/// - A refresh the provider rejects (`invalid_grant` or another client problem) logs the user out:
///   the stored login is deleted, ``events`` and the delegate are told. A transient failure (network,
///   5xx, timeout) logs nobody out: the caller gets a retryable error, and the next call tries again.
///
/// ```swift
/// let session = AuthenticatedSession(store: keychain, key: .schibsted(clientID: id),
///                                    source: .refreshToken(tokenClient), transport: transport,
///                                    allowlist: .default(for: apiBaseURL))
/// let response = try await session.send(HTTPRequest(url: apiBaseURL.appendingPathComponent("me")))
/// ```
public actor AuthenticatedSession {
    /// Where new tokens come from.
    public enum TokenSource: Sendable {
        /// The stored refresh token, at the provider's token endpoint.
        case refreshToken(TokenClient)
        /// The host application's token provider (the Subaio Fintech Bridge pattern).
        case host(@Sendable () async -> TokenProviderOutcome)
    }

    public let store: any TokenStore
    public let key: TokenStoreKey
    public let source: TokenSource
    public let transport: any HTTPTransport
    public let allowlist: HostAllowlist
    /// A token expiring within this many seconds is refreshed before use (60 by default).
    public var refreshMargin: TimeInterval = 60
    /// How long to wait before asking a token provider again after "temporarily unavailable"
    /// without a delay of its own (60 s by default).
    public var temporarilyUnavailableDelay: TimeInterval = 60
    /// Timeout and size limit for the resource requests.
    public var requestOptions = HTTPRequestOptions()

    /// Session events, for any number of observers over the session's lifetime; buffers the latest 64.
    public nonisolated let events: AsyncStream<SessionEvent>
    private let eventSink: AsyncStream<SessionEvent>.Continuation
    private weak var delegate: (any AuthenticatedSessionDelegate)?
    private let now: @Sendable () -> Date

    private var current: StoredLogin?
    private var loaded = false
    private var refreshTask: Task<StoredLogin, any Error>?
    private var hostRetryAfter: Date?
    private var hostUnauthenticated = false

    public init(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
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
    public static func resumeLastLoggedInUser(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist
    ) async throws -> AuthenticatedSession? {
        guard try await store.load(key) != nil else { return nil }
        return AuthenticatedSession(store: store, key: key, source: source, transport: transport, allowlist: allowlist)
    }

    public func setDelegate(_ delegate: (any AuthenticatedSessionDelegate)?) { self.delegate = delegate }

    public func setRefreshMargin(_ seconds: TimeInterval) { refreshMargin = seconds }

    public func setRequestOptions(_ options: HTTPRequestOptions) { requestOptions = options }

    public func setTemporarilyUnavailableDelay(_ seconds: TimeInterval) { temporarilyUnavailableDelay = seconds }

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
        try allowlist.check(request.url)
        let tokens = try await validTokens()
        let response = try await transport.send(Self.authorized(request, tokens.accessToken), options: requestOptions)
        guard response.status == 401 else { return response }
        let fresh = try await refresh(replacing: tokens.accessToken).tokens
        let retried = try await transport.send(Self.authorized(request, fresh.accessToken), options: requestOptions)
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
        if let current, !forceRefresh, !current.tokens.isExpired(at: now(), margin: refreshMargin) {
            return current.tokens
        }
        return try await refresh(replacing: current?.tokens.accessToken).tokens
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
    public func logout(revoke: Bool = true) async throws(OIDCError) {
        try await loadIfNeeded()
        if revoke, case .refreshToken(let client) = source, client.provider.revocationEndpoint != nil,
            let token = current?.tokens.refreshToken ?? current?.tokens.accessToken
        {
            try? await client.revoke(token, hint: current?.tokens.refreshToken == nil ? .accessToken : .refreshToken)
        }
        try await endLogin(.userInitiated)
    }

    // MARK: Refresh

    private func loadIfNeeded() async throws(OIDCError) {
        guard !loaded else { return }
        current = try await storage { try await self.store.load(self.key) }
        loaded = true
    }

    /// One refresh for everyone: callers during a refresh wait for it; callers after it, whose
    /// token was already replaced, get the new one without another refresh.
    private func refresh(replacing stale: Secret?) async throws(OIDCError) -> StoredLogin {
        if let refreshTask { return try await Self.value(of: refreshTask) }
        if let current, let stale, current.tokens.accessToken != stale, !current.tokens.isExpired(at: now(), margin: refreshMargin) {
            return current
        }
        let task = Task { try await self.refreshUnderLock(replacing: stale) }
        refreshTask = task
        defer { refreshTask = nil }
        return try await Self.value(of: task)
    }

    private func refreshUnderLock(replacing stale: Secret?) async throws -> StoredLogin {
        try await store.withLock(key) { try await self.refreshLocked(replacing: stale) }
    }

    /// Under the store's lock: re-read, adopt tokens another process rotated, else refresh.
    private func refreshLocked(replacing stale: Secret?) async throws(OIDCError) -> StoredLogin {
        let stored = try await storage { try await self.store.load(self.key) }
        current = stored
        if let stored, stored.tokens.accessToken != stale, !stored.tokens.isExpired(at: now(), margin: refreshMargin) {
            eventSink.yield(.tokensRefreshed)
            return stored
        }
        switch source {
        case .refreshToken(let client):
            guard let stored else {
                throw OIDCError(.notLoggedIn, "Nobody is logged in under \(key); log in first.")
            }
            guard let refreshToken = stored.tokens.refreshToken else {
                try await endLogin(.noRefreshToken)
                throw OIDCError(.notLoggedIn, "The access token expired and the login has no refresh token; log in again.")
            }
            let answer: TokenSet
            do { answer = try await client.refresh(refreshToken) } catch {
                if error.category == .provider {
                    // invalid_grant and every other client problem: this login cannot be refreshed.
                    try await endLogin(.refreshRejected(error.providerError))
                }
                throw error
            }
            var refreshed = stored
            refreshed.tokens = stored.tokens.refreshed(with: answer)
            try await storage { try await self.store.save(refreshed, for: self.key) }
            current = refreshed
            eventSink.yield(.tokensRefreshed)
            return refreshed
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
            switch await provide() {
            case .token(let tokens):
                hostRetryAfter = nil
                let login = StoredLogin(
                    tokens: tokens, issuer: stored?.issuer ?? "", clientID: stored?.clientID ?? "", subject: stored?.subject,
                    attributes: stored?.attributes ?? [:]
                )
                try await storage { try await self.store.save(login, for: self.key) }
                current = login
                eventSink.yield(.tokensRefreshed)
                return login
            case .temporarilyUnavailable(let delay):
                let seconds = delay ?? temporarilyUnavailableDelay
                hostRetryAfter = now().addingTimeInterval(seconds)
                throw OIDCError(
                    .temporarilyUnavailable, "The host application's token provider is temporarily unavailable; the session asks again in \(Int(seconds)) s.",
                    context: ["retryAfter": String(Int(seconds))]
                )
            case .unauthenticated:
                hostUnauthenticated = true
                try await endLogin(.unauthenticated)
                throw OIDCError(.notLoggedIn, "The host application said nobody is signed in.")
            }
        }
    }

    private func endLogin(_ reason: LogoutReason) async throws(OIDCError) {
        try await storage { try await self.store.delete(self.key) }
        current = nil
        loaded = true
        eventSink.yield(.loggedOut(reason))
        delegate?.userDidLogout(reason: reason)
    }

    // MARK: Helpers

    private static func authorized(_ request: HTTPRequest, _ token: Secret) -> HTTPRequest {
        var request = request
        request.headers.set("Authorization", "Bearer " + token.revealedValue)
        return request
    }

    private static func value(of task: Task<StoredLogin, any Error>) async throws(OIDCError) -> StoredLogin {
        do { return try await task.value } catch let error as OIDCError { throw error } catch {
            throw OIDCError(.storageFailure, "The token store failed: \(error).")
        }
    }

    /// Runs a store operation; errors that are not ``OIDCError``s become `storageFailure`.
    private func storage<T>(_ body: () async throws -> T) async throws(OIDCError) -> T {
        do { return try await body() } catch let error as OIDCError { throw error } catch {
            throw OIDCError(.storageFailure, "The token store failed: \(error).")
        }
    }
}
