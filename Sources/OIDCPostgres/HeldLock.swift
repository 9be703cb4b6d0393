internal import Logging
internal import OIDC
internal import PostgresNIO
internal import Synchronization

/// A login's advisory lock as ``PostgresTokenStore/withLock(_:_:)`` holds it: the connection whose
/// server session owns the lock, kept inside a transaction block for as long as the lock is held
/// (so that no pooler can hand that session to another client). While the body runs, that login's
/// loads, saves and deletes go through this connection, and each statement checks in itself that
/// it runs on the lock's session and that the session still holds the lock (``LockFence``): a
/// write can only happen while the lock is held. When the connection is lost, so is the lock (the
/// server releases it), and every later statement fails instead of writing under a lock that
/// another instance may hold by now.
final class HeldLock: Sendable {
    /// Which store (client and table) and which login the lock is for.
    let client: ObjectIdentifier
    let table: String
    let key: TokenStoreKey
    let connection: PostgresConnection
    /// The lock and the server session that took it.
    let fence: LockFence
    private let state = Mutex(State())

    private struct State {
        /// A statement on the connection ended without the server's answer (a timeout, a
        /// cancellation, a broken connection), or found the lock gone from its session: the server
        /// may or may not hold the lock any more, and a statement may still be pending. Nothing
        /// more is sent, and the connection is closed at release.
        var inDoubt = false
        /// `withLock` has returned: a task the body left behind must not use the connection.
        var released = false
    }

    init(client: PostgresClient, table: String, key: TokenStoreKey, connection: PostgresConnection, fence: LockFence) {
        self.client = ObjectIdentifier(client)
        self.table = table
        self.key = key
        self.connection = connection
        self.fence = fence
    }

    var isUsable: Bool { state.withLock { !$0.inDoubt && !$0.released } && !connection.isClosed }
    var isInDoubt: Bool { state.withLock { $0.inDoubt } }
    var isReleased: Bool { state.withLock { $0.released } }
    func markInDoubt() { state.withLock { $0.inDoubt = true } }
    func markReleased() { state.withLock { $0.released = true } }

    /// The locks the current task holds, innermost last.
    @TaskLocal static var held: [HeldLock] = []
}

extension PostgresTokenStore {
    /// The lock of `key` this task works under through this store, if any, even when it is lost or
    /// already released: a task the body started and left behind must not fall back to the pool
    /// and write without the lock.
    func heldLock(for key: TokenStoreKey) -> HeldLock? {
        HeldLock.held.last { held in
            held.client == ObjectIdentifier(client) && held.table == table
                && held.key.service.utf8.elementsEqual(key.service.utf8) && held.key.account.utf8.elementsEqual(key.account.utf8)
        }
    }

    /// The rows of `key`'s statement. Without `key`'s lock in this task: `statement(nil)` on any
    /// connection of the pool. Under it: `statement(fence)`, which must return the fence's columns
    /// (``LockFence/columns``) first, on the lock's connection; refused when the lock is lost or
    /// the fence fails. A write (`writes`) is then committed at once with `COMMIT AND CHAIN`, which
    /// keeps the transaction block open, and with it the lock's server session.
    func rows(
        for key: TokenStoreKey, _ action: String, _ record: String, writes: Bool = false, _ statement: (LockFence?) -> PostgresQuery
    ) async throws(OIDCError) -> [PostgresRow] {
        let logger = logger, limit = operationTimeout
        guard let held = heldLock(for: key) else {
            let client = client, query = statement(nil)
            return try await PostgresFailure.within(operationTimeout, action, record) {
                try await ConnectionEnd.rows(query, on: client, logger: logger, settleWithin: limit)
            }
        }
        guard held.isUsable else {
            if held.isReleased {
                logger.warning("called after its lock was released; refused", metadata: metadata(key, ["action": .string(action)]))
                throw OIDCError(
                    .storageFailure,
                    "\(action.prefix(1).uppercased() + action.dropFirst()) \(record) was refused: it was called from a task started under the lock, after the lock was released. Finish such work inside withLock, or call it from a task that does not inherit the lock.",
                    context: ["record": record])
            }
            logger.warning("lock lost; refused rather than done without it", metadata: metadata(key, ["action": .string(action)]))
            throw Self.lockLost(action, record)
        }
        let connection = held.connection, query = statement(held.fence)
        let rows: [PostgresRow]
        do {
            rows = try await Deadline.run(limit) { try await connection.query(query, logger: logger).collect() }
        } catch let error as PSQLError where error.serverInfo != nil && !ConnectionEnd.endsSession(error) {
            // The server answered (the connection, and with it the lock, is still there) and aborted
            // the transaction: back to a fresh one, still holding the lock, or in doubt. (An error
            // that ended the session lost the lock: in doubt, below.)
            let recovered = await Self.uncancelled {
                (try? await Deadline.run(limit) { try await connection.query("ROLLBACK AND CHAIN", logger: logger).collect() }) != nil
            }
            if !recovered { held.markInDoubt() }
            throw PostgresFailure.storageError(error, action, record)
        } catch {
            held.markInDoubt()
            if error is CancellationError { throw OIDCError(.cancelled, "Cancelled while \(action) \(record).") }
            logger.warning("lock connection lost or silent; refused rather than done without the lock", metadata: metadata(key, ["action": .string(action)]))
            throw Self.lockLost(action, record)
        }
        do throws(LockFence.Breach) {
            try held.fence.check(rows.first)
        } catch {
            held.markInDoubt()
            let session: Logger.MetadataValue = if case .otherSession(let pid) = error { .stringConvertible(pid) } else { .stringConvertible(held.fence.pid) }
            logger.warning(
                "statement without the lock on its server session; refused, nothing written",
                metadata: metadata(key, ["action": .string(action), "lock_session": .stringConvertible(held.fence.pid), "session": session]))
            throw held.fence.refusal(error, action, record)
        }
        if writes {
            do {
                _ = try await Deadline.run(limit) { try await connection.query("COMMIT AND CHAIN", logger: logger).collect() }
            } catch {
                held.markInDoubt()
                if error is CancellationError { throw OIDCError(.cancelled, "Cancelled while \(action) \(record).") }
                logger.warning("commit under the lock failed or did not answer", metadata: metadata(key, ["action": .string(action)]))
                throw Self.lockLost(action, record)
            }
        }
        return rows
    }

    static func lockLost(_ action: String, _ record: String) -> OIDCError {
        OIDCError(
            .storageFailure,
            "The connection that held the lock of \(record) was lost or did not answer, so another instance may hold the lock now: \(action) it was refused rather than done without the lock. Nothing was changed by this call unless PostgreSQL had committed it before the connection broke; check that the server is up and reachable.",
            context: ["record": record])
    }
}
