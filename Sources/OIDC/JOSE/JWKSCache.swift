public import Foundation

/// The provider's JWKS, fetched on demand and cached.
///
/// - A cached set is used for ``maximumAge`` (5 minutes by default), then fetched again.
/// - A token whose `kid` is not in the set triggers one refetch, but only if the cached set is older
///   than ``unknownKeyCooldown`` (1 minute): key rotation works, and a flood of tokens with forged
///   `kid`s cannot turn into a flood of fetches.
/// - Concurrent callers share one fetch.
/// - While fetches fail, the cached set keeps serving for at most ``maximumStaleAge`` (24 hours).
/// - A published JWKS never supplies an HMAC (`oct`) key: such keys are skipped (RFC 8725 §3.1).
///
/// The fetch is a closure, so any transport can supply the bytes (the library's HTTP client, a file,
/// a test).
public actor JWKSCache {
    /// Returns the JWKS document's bytes; an error it throws is a failed fetch.
    public typealias Fetch = @Sendable () async throws -> [UInt8]

    /// How long a fetched set is used before it is fetched again, in seconds (300 by default).
    public let maximumAge: TimeInterval
    /// The least time, in seconds, between the last fetch attempt and a refetch for an unknown `kid`,
    /// or a retry while a stale cached set still serves (60 by default).
    public let unknownKeyCooldown: TimeInterval
    /// How long a cached set keeps serving while every fetch fails (24 hours by default): after
    /// that, verification fails with the fetch's (transient) error rather than trust keys the
    /// provider may have withdrawn long ago.
    public let maximumStaleAge: TimeInterval
    private let fetch: Fetch
    private let now: @Sendable () -> Date

    private var cached: (keys: JWKSet, fetchedAt: Date)?
    private var inFlight: Task<JWKSet, any Error>?
    /// How many fetches ran (for tests and metrics).
    public private(set) var fetchCount = 0

    /// A cache over any source of JWKS bytes; nothing is fetched before keys are asked for.
    ///
    /// - Parameters:
    ///   - maximumAge: seconds a fetched set is used (5 minutes by default).
    ///   - unknownKeyCooldown: seconds before a refetch for an unknown `kid`, or a retry while a
    ///     stale set serves (1 minute).
    ///   - maximumStaleAge: seconds a cached set keeps serving while fetches fail (24 hours).
    ///   - now: the clock (injectable for tests).
    ///   - fetch: returns the JWKS document's bytes.
    public init(
        maximumAge: TimeInterval = 300, unknownKeyCooldown: TimeInterval = 60, maximumStaleAge: TimeInterval = 86_400,
        now: @escaping @Sendable () -> Date = { Date() }, fetch: @escaping Fetch
    ) {
        self.maximumAge = maximumAge
        self.unknownKeyCooldown = unknownKeyCooldown
        self.maximumStaleAge = maximumStaleAge
        self.now = now
        self.fetch = fetch
    }

    /// The current key set, fetched if there is none or it is older than ``maximumAge``. When that
    /// fetch fails and a set is cached, the cached set is used (the provider's keys do not stop
    /// being its keys during an outage) and no new fetch is tried within ``unknownKeyCooldown``.
    public func keys() async throws -> JWKSet {
        if let cached, now().timeIntervalSince(cached.fetchedAt) < maximumAge { return cached.keys }
        let usable = cached.flatMap { now().timeIntervalSince($0.fetchedAt) < maximumStaleAge ? $0.keys : nil }
        if let usable, let lastAttempt, now().timeIntervalSince(lastAttempt) < unknownKeyCooldown { return usable }
        do { return try await refresh() } catch {
            if let usable { return usable }
            throw error
        }
    }

    /// A fresher key set after a token named a key the cached set lacks, or `nil` when the last
    /// fetch (successful or not) is younger than ``unknownKeyCooldown``: the answer then stays "no
    /// such key", so a flood of forged `kid`s costs at most one fetch per cool-down, even while
    /// the provider is down.
    public func keysAfterUnknownKey() async throws -> JWKSet? {
        if let lastAttempt, now().timeIntervalSince(lastAttempt) < unknownKeyCooldown { return nil }
        return try await refresh()
    }

    private var lastAttempt: Date?

    private func refresh() async throws -> JWKSet {
        if let inFlight { return try await inFlight.value }
        let fetch = self.fetch
        let task = Task<JWKSet, any Error> { try JWKSet(json: try await fetch(), allowsSymmetricKeys: false) }
        inFlight = task
        fetchCount += 1
        lastAttempt = now()
        defer { inFlight = nil }
        let keys = try await task.value
        cached = (keys, now())
        return keys
    }
}

extension IDTokenVerifier {
    /// Verifies `token` with keys from `cache`, refetching once (within the cache's limits) when the
    /// token names a key the cached set does not have.
    public func verify(_ token: String, keys cache: JWKSCache, now: Date = Date()) async throws -> IDToken {
        let keys = try await cache.keys()
        do {
            return try verify(token, keys: keys, now: now)
        } catch where error.code == .keyNotFound {
            guard let fresher = try await cache.keysAfterUnknownKey() else { throw error }
            return try verify(token, keys: fresher, now: now)
        }
    }
}
