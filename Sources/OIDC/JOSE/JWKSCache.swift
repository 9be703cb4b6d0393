public import Foundation
public import Logging

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
///
/// With a ``logger``: fetches and their key ids at `debug`, cache hits and the key a token chose at
/// `trace`, a stale set served during an outage at `warning` (see <doc:Logging>).
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
    /// Where fetches, cache decisions and the keys chosen are logged (label `oidc.jwks` by
    /// convention); a logger that discards everything unless one was given.
    public nonisolated let logger: Logger
    private let fetch: Fetch
    private let now: @Sendable () -> Date

    private var cached: (keys: JWKSet, fetchedAt: Date)?
    private var fetches = SingleFlight<Int, JWKSet>()
    /// How many fetches ran (for tests and metrics).
    package private(set) var fetchesRun = 0

    /// A cache over any source of JWKS bytes; nothing is fetched before keys are asked for.
    ///
    /// - Parameters:
    ///   - maximumAge: seconds a fetched set is used (5 minutes by default).
    ///   - unknownKeyCooldown: seconds before a refetch for an unknown `kid`, or a retry while a
    ///     stale set serves (1 minute).
    ///   - maximumStaleAge: seconds a cached set keeps serving while fetches fail (24 hours).
    ///   - now: the clock (injectable for tests).
    ///   - logger: where fetches and cache decisions are logged; `nil` (the default) logs nothing.
    ///   - fetch: returns the JWKS document's bytes.
    public init(
        maximumAge: TimeInterval = 300, unknownKeyCooldown: TimeInterval = 60, maximumStaleAge: TimeInterval = 86_400,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger? = nil, fetch: @escaping Fetch
    ) {
        self.logger = logger ?? OIDCLog.jwks
        self.maximumAge = maximumAge
        self.unknownKeyCooldown = unknownKeyCooldown
        self.maximumStaleAge = maximumStaleAge
        self.now = now
        self.fetch = fetch
    }

    /// The current key set, fetched if there is none or it is older than ``maximumAge``. When that
    /// fetch fails and a set is cached, the cached set is used (the provider's keys do not stop
    /// being its keys during an outage) and no new fetch is tried within ``unknownKeyCooldown``.
    ///
    /// - Throws: the fetch's error as an ``OIDCError`` (an error of another type becomes
    ///   ``OIDCError/Code/networkFailure``); ``OIDCError/Code/cancelled`` when the caller is
    ///   cancelled while it waits (the fetch goes on for the others).
    public func keys() async throws(OIDCError) -> JWKSet {
        if let cached, now().timeIntervalSince(cached.fetchedAt) < maximumAge {
            logger.trace("JWKS cache hit", metadata: ["keys": .int(cached.keys.keys.count), "age_s": .seconds(now().timeIntervalSince(cached.fetchedAt))])
            return cached.keys
        }
        let usable = cached.flatMap { now().timeIntervalSince($0.fetchedAt) < maximumStaleAge ? $0.keys : nil }
        if let usable, let lastAttempt, now().timeIntervalSince(lastAttempt) < unknownKeyCooldown {
            logger.debug("serving the cached JWKS: the last fetch failed less than a cool-down ago", metadata: ["age_s": .seconds(staleAge)])
            return usable
        }
        do { return try await refresh(reason: cached == nil ? "empty" : "expired") } catch {
            if let usable {
                logger.warning("JWKS fetch failed; serving the stale cached set", metadata: Logger.Metadata.failure(error).merging(["age_s": .seconds(staleAge)]) { $1 })
                return usable
            }
            throw error
        }
    }

    private var staleAge: TimeInterval { cached.map { now().timeIntervalSince($0.fetchedAt) } ?? 0 }


    /// A fresher key set after a token named a key the cached set lacks, or `nil` when the last
    /// fetch (successful or not) is younger than ``unknownKeyCooldown``: the answer then stays "no
    /// such key", so a flood of forged `kid`s costs at most one fetch per cool-down, even while
    /// the provider is down.
    ///
    /// - Throws: as ``keys()``.
    package func refetchAfterUnknownKey() async throws(OIDCError) -> JWKSet? {
        if let lastAttempt, now().timeIntervalSince(lastAttempt) < unknownKeyCooldown {
            logger.debug("unknown key id; no refetch within the cool-down", metadata: ["cooldown_s": .seconds(unknownKeyCooldown)])
            return nil
        }
        return try await refresh(reason: "unknown_kid")
    }

    private var lastAttempt: Date?

    /// One fetch for every caller: a caller cancelled while it runs stops waiting, the fetch goes on.
    private func refresh(reason: String) async throws(OIDCError) -> JWKSet {
        let task: Task<JWKSet, any Error>
        if let running = fetches.task(for: 0) {
            logger.trace("waiting for a JWKS fetch in flight")
            task = running
        } else {
            fetchesRun += 1
            lastAttempt = now()
            logger.debug("fetching JWKS", metadata: ["reason": .string(reason), "fetch": .int(fetchesRun)])
            task = fetches.launch(0) { number in
                Task {
                    defer { self.fetches.land(0, number) }
                    return try await self.fetchAndCache()
                }
            }
        }
        return try await SingleFlight<Int, JWKSet>.value(
            of: task, cancelled: OIDCError(.cancelled, "Cancelled while the provider's keys were being fetched."),
            failed: { error in OIDCError(.networkFailure, "The provider's keys could not be fetched (\(type(of: error))).") }
        )
    }

    /// The fetch itself; its outcome is logged once, whoever waits for it.
    private func fetchAndCache() async throws(OIDCError) -> JWKSet {
        let keys: JWKSet
        do throws(OIDCError) {
            let bytes: [UInt8]
            do { bytes = try await fetch() } catch let error as OIDCError { throw error } catch {
                throw OIDCError(.networkFailure, "The provider's keys could not be fetched (\(type(of: error))).")
            }
            keys = try JWKSet(json: bytes, allowsSymmetricKeys: false)
        } catch {
            logger.debug("JWKS fetch failed", metadata: .failure(error))
            throw error
        }
        cached = (keys, now())
        logger.debug(
            "JWKS fetched",
            metadata: ["keys": .int(keys.keys.count), "kids": .untrusted(keys.keys.map { $0.keyID ?? "-" }.joined(separator: ","), limit: 256)]
        )
        return keys
    }
}
