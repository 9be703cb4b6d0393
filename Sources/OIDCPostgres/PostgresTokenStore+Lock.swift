internal import Logging
public import OIDC
package import PostgresNIO

extension PostgresTokenStore {
    /// Runs `body` while holding the advisory lock of `key`, exclusive across every process and
    /// machine that uses this table.
    ///
    /// The lock is a transaction-scoped advisory lock on a connection of the pool held for the
    /// body. It is released when `body` returns or throws, and by the server when that connection
    /// ends (the process died, the network broke). When the connection is lost while `body` runs,
    /// `body` still finishes and its result is returned: the lock's transaction wrote nothing.
    /// Do not nest `withLock` for the same key: the inner call waits for the outer one and times out.
    ///
    /// - Throws: `OIDCError.Code.storageFailure` when the lock is not free within ``lockTimeout``
    ///   or PostgreSQL cannot be reached; `CancellationError` when the task is cancelled before the
    ///   lock is taken; whatever `body` throws.
    public func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        try checkStorable(key)
        let name = recordName(key)
        let lockKey = Self.advisoryLockKey(table: table, for: key)
        // lock_timeout in whole milliseconds (at least 1: 0 would mean no limit).
        let milliseconds = max(1, lockTimeout.components.seconds * 1000 + lockTimeout.components.attoseconds / 1_000_000_000_000_000)
        let logger = logger, limit = operationTimeout
        // A statement on a connection that died may never complete: each is bounded, and none is
        // sent on a connection known to be closed.
        @Sendable func run(_ connection: PostgresConnection, _ statement: PostgresQuery, within: Duration) async throws {
            guard !connection.isClosed else { throw LockConnectionClosed() }
            try await Deadline.run(within) { try await connection.query(statement, logger: logger).drain() }
        }
        do {
            return try await client.withConnection { connection in
                do {
                    try await run(connection, "BEGIN", within: limit)
                    try await run(connection, "SET LOCAL lock_timeout = \(unescaped: String(milliseconds))", within: limit)
                    // The server gives up first (lock_timeout), with an error that says so.
                    try await run(connection, "SELECT pg_advisory_xact_lock(\(lockKey))", within: lockTimeout + limit)
                    try Task.checkCancellation()
                } catch {
                    try? await run(connection, "ROLLBACK", within: limit)
                    throw error
                }
                let result: T
                do {
                    result = try await body()
                } catch {
                    try? await run(connection, "ROLLBACK", within: limit)
                    throw BodyError(error: error)
                }
                // Nothing was written in this transaction: if COMMIT fails (the connection is gone),
                // the server has released the lock already and nothing is lost.
                try? await run(connection, "COMMIT", within: limit)
                return result
            }
        } catch let error as BodyError {
            throw error.error
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == PostgresFailure.lockNotAvailable {
            throw OIDCError(
                .storageFailure,
                "The lock of \(name) was held by another instance for longer than \(lockTimeout): check for a hung instance (pg_locks, locktype 'advisory') and try again.",
                context: ["record": name, "sqlState": PostgresFailure.lockNotAvailable])
        } catch is LockConnectionClosed {
            throw OIDCError(
                .storageFailure, "The connection that was to hold the lock of \(name) closed: check that PostgreSQL is up and reachable.",
                context: ["record": name])
        } catch is Deadline.Expired {
            throw OIDCError(
                .storageFailure, "PostgreSQL did not answer within \(operationTimeout) while locking \(name): check that the server is up and reachable.",
                context: ["record": name])
        } catch {
            throw PostgresFailure.storageError(error, "locking", name)
        }
    }

    /// The 64-bit advisory lock key of a login: the first 8 bytes of SHA-256 over
    /// `oidc-token-store`, the table, the service and the account, each followed by a NUL byte, read
    /// as a big-endian signed integer. Stable across versions, machines and processes; another
    /// table's logins never share a lock. In `pg_locks` (`locktype = 'advisory'`, `objsubid = 1`),
    /// `classid` holds its upper 32 bits and `objid` its lower 32 bits.
    public static func advisoryLockKey(table: String, for key: TokenStoreKey) -> Int64 {
        var input: [UInt8] = []
        for part in ["oidc-token-store", table, key.service, key.account] {
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

/// The lock's connection closed before a statement could be sent on it.
private struct LockConnectionClosed: Error {}

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
