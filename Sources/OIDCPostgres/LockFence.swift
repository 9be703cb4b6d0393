internal import OIDC
internal import PostgresNIO

/// The check that every statement under ``PostgresTokenStore/withLock(_:_:)`` makes in itself:
/// it runs on the server session that took the lock (`pg_backend_pid()` is that session's), and
/// that session still holds the lock (`pg_locks`). A statement that fails the check changes
/// nothing and is refused, whatever happened between the client and the server: a pooler that
/// handed the connection's statements to another server session, a lock released on its session
/// without the connection closing (`pg_advisory_unlock_all()`, `DISCARD ALL`).
struct LockFence: Sendable {
    /// The lock, as `pg_advisory_lock` takes it.
    let lockKey: Int64
    /// The server session that took it.
    let pid: Int32

    /// An SQL expression: whether the server session running it holds `lockKey`'s lock (exclusive,
    /// granted). In `pg_locks`, a 64-bit advisory key has its upper 32 bits in `classid`, its lower
    /// 32 bits in `objid`, and `objsubid` 1. The values are integers the store computed, never input.
    static func heldBySession(_ lockKey: Int64) -> String {
        let high = Int64(UInt32(truncatingIfNeeded: lockKey >> 32)), low = Int64(UInt32(truncatingIfNeeded: lockKey))
        return """
            EXISTS (SELECT 1 FROM pg_catalog.pg_locks AS l WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' \
            AND l.granted AND l.pid = pg_backend_pid() AND l.objsubid = 1 AND l.classid::bigint = \(high) AND l.objid::bigint = \(low))
            """
    }

    /// A common table expression, `fence(pid, held)`: one row, read once per statement.
    var table: String { "fence AS (SELECT pg_backend_pid() AS pid, \(Self.heldBySession(lockKey)) AS held)" }

    /// The condition, over `fence`, under which the statement may act.
    var passes: String { "fence.held AND fence.pid = \(pid)" }

    /// The columns every fenced statement returns first, from `FROM fence` (so always one row).
    static let columns = "fence.pid AS fence_pid, fence.held AS fence_held"

    /// Why a fenced statement was refused.
    enum Breach: Error {
        /// It ran on another server session than the lock's.
        case otherSession(Int32)
        /// It ran on the lock's session, which no longer holds the lock.
        case released
        /// No fence row came back.
        case noAnswer
    }

    /// Checks the fence columns of a fenced statement's row.
    func check(_ row: PostgresRow?) throws(Breach) {
        guard let row else { throw .noAnswer }
        let cells = row.makeRandomAccess()
        guard cells.contains("fence_pid"), cells.contains("fence_held"),
            let ranOn = try? cells["fence_pid"].decode(Int32.self), let held = try? cells["fence_held"].decode(Bool.self)
        else { throw .noAnswer }
        guard ranOn == pid else { throw .otherSession(ranOn) }
        guard held else { throw .released }
    }

    /// The error for `breach` of `action` (`"saving"`) on `record`: nothing was written.
    func refusal(_ breach: Breach, _ action: String, _ record: String) -> OIDCError {
        let what = action.prefix(1).uppercased() + action.dropFirst()
        let context = ["record": record, "lockSession": String(pid)]
        switch breach {
        case .otherSession(let other):
            return OIDCError(
                .storageFailure,
                "\(what) \(record) was refused: it ran on PostgreSQL server session \(other), not on \(pid), which holds the lock, so a connection pooler moved this connection to another server session while the lock was held (a pooler in statement mode, or one that does not keep a server session for an open transaction). Nothing was written. Connect the store directly to PostgreSQL, or through session pooling (PgBouncer pool_mode=session) or PgBouncer's transaction pooling.",
                context: context.merging(["session": String(other)]) { $1 })
        case .released:
            return OIDCError(
                .storageFailure,
                "\(what) \(record) was refused: PostgreSQL server session \(pid) no longer holds the lock (something released it on that session without closing it: pg_advisory_unlock_all(), DISCARD ALL, a pooler's reset query), so another instance may hold it now. Nothing was written; the next withLock takes the lock again.",
                context: context)
        case .noAnswer:
            return OIDCError(
                .storageFailure, "\(what) \(record) was refused: PostgreSQL did not say whether this server session holds the lock. Nothing was written.",
                context: context)
        }
    }
}
