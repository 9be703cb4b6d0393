public import Foundation
public import Logging
public import OIDC
public import OIDCResourceServer
public import PostgresNIO
internal import Synchronization

/// A `ReplayStore` in PostgreSQL, for a resource server that runs more than one instance: a DPoP
/// proof's or a logout token's `jti` claimed at one instance is refused at every other.
///
/// ```swift
/// let client = PostgresClient(configuration: try PostgresConnectionURL.configuration(from: databaseURL))
/// let replays = try PostgresReplayStore(client: client)
/// // with `client.run()` running in a task of its own:
/// try await replays.migrate()
/// ```
///
/// **Schema** (created by ``migrate()``, which is idempotent and safe to run from every instance at
/// start-up; `oidc_replay` is the default table name):
///
/// ```sql
/// CREATE TABLE IF NOT EXISTS oidc_replay (
///     id         bytea       PRIMARY KEY,  -- SHA-256 of the identifier: 32 bytes, whatever its length
///     expires_at timestamptz NOT NULL
/// );
/// CREATE INDEX IF NOT EXISTS oidc_<hash> ON oidc_replay (expires_at);
/// ```
///
/// - **One statement per claim.** ``claim(_:until:now:)`` is one
///   `INSERT … ON CONFLICT (id) DO UPDATE … WHERE expires_at <= now RETURNING 1`: a new identifier,
///   or one whose record has expired, is recorded and answered `true`; a live one is left as it is
///   and answered `false`. PostgreSQL's unique index decides between two instances claiming the
///   same identifier at once: exactly one of them gets `true`.
/// - **Hashed identifiers.** The table holds SHA-256 of each identifier, never the identifier: a
///   fixed 32 bytes whatever the caller scopes it with, and no proof or token material at rest.
/// - **Bounded.** At most once per ``purgeInterval`` per instance, a claim is followed by one
///   `DELETE` of at most ``purgeLimit`` rows expired for longer than ``purgeMargin`` (the oldest
///   first; rows another instance is deleting are skipped), so the table holds about the
///   identifiers of the last few minutes. ``purgeExpired()`` does the same on demand, from a job
///   of your own.
/// - **Whose clock.** Expiries are the callers' (each instance's clock, like the identifiers'
///   `iat` windows), never the database server's. A claim compares a held record's expiry with
///   the clock of the caller that judged the identifier's age (``claim(_:until:now:)``; ``now``
///   for ``claim(_:until:)``), so each instance agrees with itself. A purge deletes a record only
///   once it has been expired for ``purgeMargin`` by ``now``: an instance whose clock runs up to
///   ``purgeMargin`` ahead of another's never deletes a record the other would still refuse a
///   replay with. **The fleet's clocks must agree within ``purgeMargin``** (5 minutes by
///   default); beyond it, a purge by the instance ahead can let a replay through at the one
///   behind. Give ``now`` the same clock as the callers (`ResourceServer.Configuration.now`).
/// - **Failures refuse.** Every failure (an unreachable server, a missing table, a call longer
///   than ``operationTimeout``) is a `ReplayStoreError` with `.unavailable`, which names the
///   table and the SQLSTATE, never an identifier; the resource server then refuses the request.
public struct PostgresReplayStore: ReplayStore {
    /// The pool the store queries; run it (`client.run()`) for as long as the store is used.
    public let client: PostgresClient
    /// The table, optionally schema-qualified (`oidc_replay`, `auth.oidc_replay`).
    public let table: String
    /// How long any database call may take before it fails.
    public let operationTimeout: Duration
    /// The most expired rows one purge deletes.
    public let purgeLimit: Int
    /// The least time between two purges made by this store value (and its copies).
    public let purgeInterval: Duration
    /// How long after its expiry (by ``now``) a record is kept before a purge may delete it: the
    /// largest clock difference between the fleet's instances that cannot let a replay through.
    public let purgeMargin: Duration
    /// The clock expiries are compared with.
    public let now: @Sendable () -> Date
    /// Where the store's events go (nowhere by default): claims and purges at `trace`, failures at
    /// `debug`. Metadata: table, counts, SQLSTATE; never an identifier.
    public let logger: Logger
    private let lastPurge: PurgeClock

    /// A store in `table`, through `client`.
    ///
    /// - Parameters:
    ///   - client: The pool; run it for as long as the store is used.
    ///   - table: One or two lower-case SQL identifiers joined by a dot (`oidc_replay` by default).
    ///   - operationTimeout: How long a call may take before it fails (5 s by default: a request
    ///     waits for it).
    ///   - purgeLimit: The most expired rows one purge deletes (1000 by default).
    ///   - purgeInterval: The least time between two purges by this store (10 s by default).
    ///   - purgeMargin: How long a record is kept after its expiry before a purge deletes it (5
    ///     minutes by default): at least the largest difference between the fleet's clocks.
    ///   - now: The clock purges (and ``claim(_:until:)``) compare expiries with; the system's by
    ///     default, a test's own in tests. The same as the callers' clock.
    ///   - logger: Where the store's events go; nowhere by default.
    /// - Throws: `OIDCError.Code.invalidArgument` when `table` is not one or two lower-case SQL
    ///   identifiers (`[a-z_][a-z0-9_]*`, at most 63 bytes each), a limit is not positive, or the
    ///   purge interval or margin is negative.
    public init(
        client: PostgresClient, table: String = "oidc_replay", operationTimeout: Duration = .seconds(5),
        purgeLimit: Int = 1000, purgeInterval: Duration = .seconds(10), purgeMargin: Duration = .seconds(300),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "oidc.replay", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(OIDCError) {
        guard PostgresTokenStore.isValidTableName(table) else {
            throw OIDCError(
                .invalidArgument,
                "The table name must be one or two lower-case SQL identifiers joined by a dot ([a-z_][a-z0-9_]*, at most 63 bytes each), not \(table.prefix(80).debugDescription)."
            )
        }
        guard operationTimeout > .zero, purgeLimit > 0, purgeInterval >= .zero, purgeMargin >= .zero else {
            throw OIDCError(
                .invalidArgument, "The replay store's time limit and purge limit must be positive, its purge interval and margin not negative.")
        }
        self.client = client
        self.table = table
        self.operationTimeout = operationTimeout
        self.purgeLimit = purgeLimit
        self.purgeInterval = purgeInterval
        self.purgeMargin = purgeMargin
        self.now = now
        self.logger = logger
        self.lastPurge = PurgeClock()
    }

    /// The table as an SQL identifier, quoted (its parts are checked at `init`).
    var quotedTable: String { table.split(separator: ".").map { "\"\($0)\"" }.joined(separator: ".") }

    /// The name of the expiry index: `oidc_` and 16 hex digits of SHA-256 over the table's name, so
    /// that it fits PostgreSQL's 63 bytes and never collides with another table's index.
    var indexName: String {
        let digest = (try? LibCrypto.sha256(Array("oidc-replay-expiry\u{0}\(table)".utf8))) ?? []
        return "oidc_" + digest.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Creates the table and its expiry index when they do not exist; does nothing otherwise. Safe
    /// to run from every instance at once (it takes an advisory lock of its own first).
    ///
    /// - Throws: `ReplayStoreError` with `.unavailable` when PostgreSQL refuses (no right to create
    ///   a table, say) or cannot be reached.
    public func migrate() async throws(ReplayStoreError) {
        let client = client, table = quotedTable, logger = logger, index = indexName
        let lockKey = Self.migrationLockKey(table: self.table)
        try await run("creating") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger).drain()
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS \(unescaped: table) (id bytea PRIMARY KEY, expires_at timestamptz NOT NULL)",
                    logger: logger
                ).drain()
                try await connection.query("CREATE INDEX IF NOT EXISTS \(unescaped: index) ON \(unescaped: table) (expires_at)", logger: logger)
                    .drain()
            }
        }
    }

    /// Records `identifier` until `expiry` across every instance that shares the table; `true` on
    /// its first use (or when its record had expired by ``now``), `false` for a replay.
    ///
    /// - Throws: `ReplayStoreError` with `.unavailable` when PostgreSQL fails, does not answer
    ///   within ``operationTimeout``, or the table is missing (run ``migrate()``).
    public func claim(_ identifier: String, until expiry: Date) async throws -> Bool {
        try await claim(identifier, until: expiry, now: now())
    }

    /// Records `identifier` until `expiry` across every instance that shares the table; `true` on
    /// its first use (or when its record had expired by `now`, the caller's clock, by which it
    /// judged the identifier's age), `false` for a replay.
    ///
    /// - Throws: `ReplayStoreError` with `.unavailable` when PostgreSQL fails, does not answer
    ///   within ``operationTimeout``, or the table is missing (run ``migrate()``).
    public func claim(_ identifier: String, until expiry: Date, now: Date) async throws -> Bool {
        let id = try Self.hash(identifier)
        let client = client, table = quotedTable, logger = logger, limit = operationTimeout
        let claimed = try await run("claiming an identifier in") {
            let rows = try await ConnectionEnd.rows(
                """
                INSERT INTO \(unescaped: table) AS held (id, expires_at) VALUES (\(id), \(expiry))
                ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE held.expires_at <= \(now)
                RETURNING 1
                """, on: client, logger: logger, settleWithin: limit)
            return !rows.isEmpty
        }
        logger.trace("replay claim", metadata: ["table": .string(table), "first_use": .stringConvertible(claimed)])
        if lastPurge.isDue(interval: purgeInterval) {
            do { _ = try await purgeExpired() } catch {
                logger.debug("purging expired identifiers failed", metadata: ["table": .string(table), "error": .string(error.description)])
            }
        }
        return claimed
    }

    /// Forgets `identifier` at every instance, so that it can be claimed again (work that failed
    /// after its claim).
    ///
    /// - Throws: `ReplayStoreError` with `.unavailable` when PostgreSQL fails or does not answer.
    public func release(_ identifier: String) async throws {
        let id = try Self.hash(identifier)
        let client = client, table = quotedTable, logger = logger, limit = operationTimeout
        try await run("releasing an identifier in") {
            _ = try await ConnectionEnd.rows("DELETE FROM \(unescaped: table) WHERE id = \(id)", on: client, logger: logger, settleWithin: limit)
        }
    }

    /// Deletes at most ``purgeLimit`` identifiers expired for longer than ``purgeMargin`` by ``now``
    /// (the oldest first) in one statement, and returns how many it deleted. Claims call it at most
    /// once per ``purgeInterval``; call it from a job of your own to keep a quiet table small.
    ///
    /// - Throws: `ReplayStoreError` with `.unavailable` when PostgreSQL fails or does not answer.
    @discardableResult
    public func purgeExpired() async throws(ReplayStoreError) -> Int {
        let client = client, table = quotedTable, logger = logger, limit = purgeLimit, settle = operationTimeout
        // Only what no instance whose clock is up to the margin behind this one's can still accept.
        let cutoff = now().addingTimeInterval(-Self.seconds(purgeMargin))
        let deleted = try await run("purging") {
            let rows = try await ConnectionEnd.rows(
                """
                WITH removed AS (
                    DELETE FROM \(unescaped: table) WHERE id IN (
                        SELECT id FROM \(unescaped: table) WHERE expires_at <= \(cutoff) ORDER BY expires_at LIMIT \(limit)
                        FOR UPDATE SKIP LOCKED)
                    RETURNING 1)
                SELECT count(*) FROM removed
                """, on: client, logger: logger, settleWithin: settle)
            return try rows.first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
        logger.trace("expired identifiers purged", metadata: ["table": .string(table), "deleted": .stringConvertible(deleted)])
        return deleted
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// SHA-256 of the identifier's UTF-8 bytes.
    static func hash(_ identifier: String) throws(ReplayStoreError) -> ByteBuffer {
        do { return ByteBuffer(bytes: try LibCrypto.sha256(Array(identifier.utf8))) } catch {
            throw ReplayStoreError(.unavailable("the identifier could not be hashed (\(error.code))"))
        }
    }

    static func migrationLockKey(table: String) -> Int64 {
        let digest = (try? LibCrypto.sha256(Array("oidc-replay-migrate\u{0}\(table)".utf8))) ?? Array(repeating: 0, count: 8)
        return digest.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    /// Runs `operation` within ``operationTimeout``, turning every failure into a
    /// `ReplayStoreError` with `.unavailable` that names the table and the SQLSTATE.
    private func run<T: Sendable>(_ action: String, _ operation: @escaping @Sendable () async throws -> T) async throws(ReplayStoreError) -> T {
        do {
            return try await PostgresFailure.within(operationTimeout, action, "the table \(table)", operation)
        } catch {
            logger.debug("replay store failed", metadata: ["table": .string(table), "error": .string(error.message)])
            if error.context["sqlState"] == PostgresFailure.undefinedTable {
                throw ReplayStoreError(.unavailable("the table \(table) does not exist: run PostgresReplayStore.migrate() once (it is idempotent)"))
            }
            throw ReplayStoreError(.unavailable(error.message))
        }
    }
}

/// When a store (and its copies) last purged, so that purges stay at most one per interval.
private final class PurgeClock: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    /// Whether a purge is due now; when it is, the next one is due an interval later.
    func isDue(interval: Duration) -> Bool {
        let now = ContinuousClock.now
        return last.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
