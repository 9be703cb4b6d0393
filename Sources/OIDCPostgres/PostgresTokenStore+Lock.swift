internal import Foundation
internal import Logging
public import OIDC
package import PostgresNIO

extension PostgresTokenStore {
    /// Runs `body` while holding the advisory lock of `key`, exclusive across every process and
    /// machine that uses this table.
    ///
    /// The lock is a session-level advisory lock (`pg_advisory_lock`) taken on a connection of the
    /// pool that is held for the body, inside a transaction block that stays open until the lock
    /// is released, so that no connection pooler can give its server session to another client
    /// meanwhile. ``load(_:)``, ``save(_:for:)`` and ``delete(_:)`` for `key` in the body's task run
    /// on that same connection, each one statement that checks that its server session holds the
    /// lock (a write is committed at once, with `COMMIT AND CHAIN`), so they are fenced by the
    /// lock: when the connection is lost, the server releases the lock, and when the lock is gone
    /// from the session or a statement runs on another session, those calls fail with
    /// `OIDCError.Code.storageFailure` instead of writing while another instance may hold it. A
    /// pool of one connection is enough. The lock is released (`pg_advisory_unlock`, then
    /// `ROLLBACK`) when `body` returns or throws; when anything about the connection is in doubt (a
    /// statement that did not answer, a cancellation while waiting), the connection is closed
    /// instead, which releases the lock on the server (a pooler closes a server session that its
    /// client left inside a transaction). Do not nest `withLock` for the same key in other tasks of
    /// the body: they wait for the outer lock and time out.
    ///
    /// Waiting for a free connection of the pool is bounded by ``operationTimeout``, waiting for
    /// the lock by ``lockTimeout``.
    ///
    /// - Throws: `OIDCError.Code.storageFailure` when the lock is not free within ``lockTimeout``,
    ///   no connection of the pool is free within ``operationTimeout``, PostgreSQL cannot be reached,
    ///   the server session a pooler gives already holds the lock, or the pooler refuses
    ///   transactions (statement pooling);
    ///   `OIDCError.Code.cancelled` when the task is cancelled before the body runs (the lock is
    ///   then released, or its connection closed); whatever `body` throws.
    public func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        try checkStorable(key)
        let key = Self.canonical(key)
        let name = recordName(key)
        let lockKey = Self.advisoryLockKey(table: table, for: key)
        let milliseconds = Self.lockTimeoutMilliseconds(lockTimeout)
        let logger = logger, limit = operationTimeout, lockTimeout = lockTimeout, client = client, table = table
        // A statement on a connection that died may never complete: each is bounded, and none is
        // sent on a connection known to be closed.
        @Sendable func run(_ connection: PostgresConnection, _ statement: PostgresQuery, within: Duration) async throws -> [PostgresRow] {
            guard !connection.isClosed else { throw LockConnectionClosed() }
            return try await Deadline.run(within) { try await connection.query(statement, logger: logger).collect() }
        }
        /// Ends the server session, which releases every lock it holds, and waits until the pool
        /// knows that the connection is closed (``ConnectionEnd``); bounded, like everything else,
        /// and done even when the caller is cancelled.
        @Sendable func discard(_ connection: PostgresConnection) async {
            await ConnectionEnd.close(connection, within: limit)
        }
        /// Rolls back a transaction that holds no lock; when that fails (or cannot be sent), the
        /// connection is closed rather than returned to the pool inside an aborted transaction.
        @Sendable func rollBack(_ connection: PostgresConnection) async {
            let done = await Self.uncancelled { (try? await run(connection, "ROLLBACK", within: limit)) != nil }
            if !done { await discard(connection) }
        }
        let asked = ContinuousClock.now
        do {
            // Waiting for a free connection is bounded too: all of them may be holding other locks.
            let (lease, connection): (ConnectionLease, PostgresConnection)
            do { (lease, connection) = try await ConnectionLease.lease(from: client, within: limit) } catch is Deadline.Expired {
                throw NoFreeConnection()
            }
            defer { lease.end() }
            // Taking the lock, inside a transaction block that stays open until the lock is released:
            // a pooler never hands a server session to another client in the middle of a
            // transaction, so the session that holds the lock serves this connection alone.
            // lock_timeout applies to the first transaction only; the lock itself belongs to the
            // server session and outlives the COMMIT AND CHAIN, which starts the next transaction
            // at once (the session never looks idle to a pooler).
            var granted = false
            let pid: Int32
            do {
                _ = try await run(connection, "BEGIN ISOLATION LEVEL READ COMMITTED", within: limit)
                let probe = try await run(
                    connection,
                    "SELECT set_config('lock_timeout', \(String(milliseconds)), true), pg_backend_pid(), \(unescaped: LockFence.heldBySession(lockKey))",
                    within: limit)
                guard let (_, session, alreadyHeld) = try probe.first?.decode((String, Int32, Bool).self) else { throw NoProbeAnswer() }
                // A session that holds the lock before we ask was left so by another client of a
                // pooler: taking it again there (advisory locks are re-entrant) would make two holders.
                guard !alreadyHeld else { throw SessionAlreadyHoldsLock(pid: session) }
                pid = session
                // The server gives up first (lock_timeout), with an error that says so.
                _ = try await run(connection, "SELECT pg_advisory_lock(\(lockKey))", within: lockTimeout + limit)
                granted = true
                _ = try await run(connection, "COMMIT AND CHAIN", within: limit)
            } catch let error as PSQLError where error.serverInfo != nil && !granted {
                // The server refused a statement before the lock (it timed out): the lock is not held.
                // When the refusal ended the session (PgBouncer's statement pooling answers BEGIN with
                // FATAL and closes the connection), there is nothing to roll back: the connection is
                // closed, and goes back to the pool only once the pool knows.
                if ConnectionEnd.endsSession(error) { await discard(connection) } else { await rollBack(connection) }
                throw error
            } catch let error as SessionAlreadyHoldsLock {
                await rollBack(connection)
                throw error
            } catch {
                // A cancellation, a timeout, a broken connection, a failed COMMIT: the lock may be
                // held, or be granted later to a statement still pending.
                await discard(connection)
                throw error
            }
            let waited = ContinuousClock.now - asked
            logger.log(
                level: waited > .milliseconds(5) ? .debug : .trace, "lock taken",
                metadata: self.metadata(key, ["wait_ms": .milliseconds(since: asked), "session": .stringConvertible(pid)]))
            let fence = LockFence(lockKey: lockKey, pid: pid)
            let held = HeldLock(client: client, table: table, key: key, connection: connection, fence: fence)
            let result: Result<T, any Error>
            if Task.isCancelled {
                result = .failure(CancellationError())
            } else {
                do {
                    result = .success(try await HeldLock.$held.withValue(HeldLock.held + [held]) { try await body() })
                } catch {
                    result = .failure(BodyError(error: error))
                }
            }
            held.markReleased()
            if held.isInDoubt || connection.isClosed {
                logger.notice("lock connection in doubt: closed, which releases the lock", metadata: self.metadata(key))
                await discard(connection)
            } else {
                // Sent even when the caller was cancelled meanwhile: the lock must not go back to the
                // pool. Unlocked only on the lock's own session; then the transaction block ends.
                let released = await Self.uncancelled {
                    let unlocked = (try? await run(
                        connection, "SELECT CASE WHEN pg_backend_pid() = \(pid) THEN pg_advisory_unlock(\(lockKey)) ELSE false END", within: limit))?
                        .first.flatMap { try? $0.decode(Bool.self) }
                    guard unlocked == true else { return false }
                    return (try? await run(connection, "ROLLBACK", within: limit)) != nil
                }
                if !released {
                    logger.notice("lock not released cleanly: connection closed, which releases it", metadata: self.metadata(key))
                    await discard(connection)
                } else {
                    logger.trace("lock released", metadata: self.metadata(key))
                }
            }
            return try result.get()
        } catch let error as BodyError {
            throw error.error
        } catch {
            let failure = lockFailure(error, name)
            if failure.code != .cancelled {
                logger.warning("could not take the lock", metadata: self.metadata(key, ["wait_ms": .milliseconds(since: asked)]).merging(.failure(failure)) { $1 })
            }
            throw failure
        }
    }

    /// What failed while taking or holding the lock of `name`, said the way a user can act on.
    private func lockFailure(_ error: any Error, _ name: String) -> OIDCError {
        switch error {
        case let error as PSQLError where error.serverInfo?[.sqlState] == PostgresFailure.lockNotAvailable:
            OIDCError(
                .storageFailure,
                "The lock of \(name) was held by another instance for longer than \(lockTimeout): check for a hung instance (pg_locks, locktype 'advisory') and try again.",
                context: ["record": name, "sqlState": PostgresFailure.lockNotAvailable])
        case is NoFreeConnection:
            OIDCError(
                .storageFailure,
                "No connection of the pool became free within \(operationTimeout) to lock \(name): the pool's connections are all busy (raise maximumConnections), or PostgreSQL cannot be reached or does not offer TLS (the database URL requires TLS unless it says sslmode=disable).",
                context: ["record": name])
        case is LockConnectionClosed:
            OIDCError(
                .storageFailure, "The connection that was to hold the lock of \(name) closed: check that PostgreSQL is up and reachable.",
                context: ["record": name])
        case let error as SessionAlreadyHoldsLock:
            OIDCError(
                .storageFailure,
                "The PostgreSQL server session this connection was given (pid \(error.pid)) already held the lock of \(name) before this instance asked for it: a connection pooler handed over a session that another client left holding the lock (an instance of an older version behind transaction pooling, or a pooler that does not keep a server session for an open transaction). Taking it again there would make two holders, so nothing was locked or written. Connect the store directly to PostgreSQL or through session pooling (PgBouncer pool_mode=session), and end that session to free the lock (SELECT pg_terminate_backend(\(error.pid))).",
                context: ["record": name, "session": String(error.pid)])
        case let error as PSQLError where error.serverInfo?[.message]?.contains("pooling mode") == true:
            OIDCError(
                .storageFailure,
                "The lock of \(name) was not taken: the connection goes through a pooler that refuses transactions (statement pooling, PgBouncer pool_mode=statement; it said: \(error.serverInfo?[.message] ?? "")). withLock keeps its server session in a transaction for as long as it holds the lock, so that no other client can use it; connect the store directly to PostgreSQL, or through session pooling (PgBouncer pool_mode=session) or PgBouncer's transaction pooling. Nothing was locked or written.",
                context: ["record": name, "sqlState": error.serverInfo?[.sqlState] ?? "?"])
        case is NoProbeAnswer:
            OIDCError(.storageFailure, "PostgreSQL gave no answer to the check before locking \(name); nothing was locked.", context: ["record": name])
        case is Deadline.Expired:
            OIDCError(
                .storageFailure,
                "PostgreSQL did not answer in time while locking \(name) (operationTimeout \(operationTimeout), lockTimeout \(lockTimeout)): check that the server is up and reachable.",
                context: ["record": name])
        default:
            PostgresFailure.storageError(error, "locking", name)
        }
    }

    /// Runs `work` in a task of its own, which the caller's cancellation does not reach: releasing a
    /// lock or closing its connection must happen even when the task that took the lock was cancelled.
    static func uncancelled<R: Sendable>(_ work: @escaping @Sendable () async -> R) async -> R {
        await Task { await work() }.value
    }

    /// `lockTimeout` in whole milliseconds for the server's `lock_timeout`: at least 1 (0 would mean
    /// no limit) and at most 2^31 − 1 (the setting's maximum, about 24.8 days).
    static func lockTimeoutMilliseconds(_ timeout: Duration) -> Int64 {
        let (seconds, attoseconds) = timeout.components
        let whole = seconds.multipliedReportingOverflow(by: 1000)
        guard !whole.overflow else { return Int64(Int32.max) }
        return min(Int64(Int32.max), max(1, whole.partialValue + attoseconds / 1_000_000_000_000_000))
    }

    /// `key` with its service and account in Unicode NFC, as rows and lock keys hold them: Swift
    /// compares strings by canonical equivalence, PostgreSQL `text` byte by byte, and both must
    /// agree on which login a key names.
    static func canonical(_ key: TokenStoreKey) -> TokenStoreKey {
        func nfc(_ text: String) -> String { text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCanonicalMapping }
        return TokenStoreKey(service: nfc(key.service), account: nfc(key.account))
    }

    /// The 64-bit advisory lock key of a login: the first 8 bytes of SHA-256 over
    /// `oidc-token-store`, the table, the service and the account (in Unicode NFC), each followed
    /// by a NUL byte, read as a big-endian signed integer. Stable across versions, machines and
    /// processes; another table's logins never share a lock. In `pg_locks` (`locktype = 'advisory'`,
    /// `objsubid = 1`), `classid` holds its upper 32 bits and `objid` its lower 32 bits.
    public static func advisoryLockKey(table: String, for key: TokenStoreKey) -> Int64 {
        let key = canonical(key)
        return lockKey(["oidc-token-store", table, key.service, key.account])
    }

    /// The lock ``migrate()`` takes: `oidc-token-store-migrate` and the table, so that it can never
    /// be a login's lock.
    static func migrationLockKey(table: String) -> Int64 { lockKey(["oidc-token-store-migrate", table]) }

    private static func lockKey(_ parts: [String]) -> Int64 {
        var input: [UInt8] = []
        for part in parts {
            input += Array(part.utf8)
            input.append(0)
        }
        let digest = (try? LibCrypto.sha256(input)) ?? fallbackDigest(input)
        return digest.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// FNV-1a, only if libcrypto's SHA-256 failed (it does not, short of memory exhaustion): any
    /// stable value keeps the lock correct; a collision only makes two logins share one lock.
    private static func fallbackDigest(_ input: [UInt8]) -> [UInt8] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in input { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return (0..<8).map { UInt8(truncatingIfNeeded: hash >> (56 - 8 * $0)) }
    }
}

extension PostgresTokenStore {
    /// The connection that holds `key`'s lock in this task, for the package's tests only: they end
    /// its transaction block, or release the lock on it without closing it, to prove that the
    /// store's statements refuse to run without the lock.
    package func lockConnectionForTesting(_ key: TokenStoreKey) -> PostgresConnection? {
        heldLock(for: Self.canonical(key))?.connection
    }
}

/// The pool had no free connection within the time limit.
private struct NoFreeConnection: Error {}

/// The lock's connection closed before a statement could be sent on it.
private struct LockConnectionClosed: Error {}

/// The server session given for the lock already held it: another client of a pooler left it so.
private struct SessionAlreadyHoldsLock: Error {
    let pid: Int32
}

/// The check before the lock returned no row.
private struct NoProbeAnswer: Error {}

/// What the body of ``PostgresTokenStore/withLock(_:_:)`` threw, kept apart from the database's errors.
private struct BodyError: Error {
    let error: any Error
}

extension PostgresRowSequence {
    /// Reads the statement's result to its end: only then has the server finished it (a lock is
    /// held, a row is written) and reported any error. The package's tests use it too.
    package func drain() async throws {
        for try await _ in self {}
    }
}
