internal import Logging
internal import PostgresNIO

/// When a connection of the pool is finished, and how it goes back to the pool only once the pool
/// knows.
///
/// PostgresNIO's pool learns that a connection closed from the connection's `closeFuture`, which
/// completes one event-loop turn after the connection went inactive, once its handlers are gone. A
/// connection given back in between is handed out again as idle, and a statement written to it
/// then is dropped without an answer (PostgresNIO never completes it): its caller waits for its
/// whole time limit. That is what a pooler that refuses `BEGIN` with a FATAL error and closes the
/// connection (PgBouncer's statement pooling) did to the next load. So a connection that closed,
/// or whose server said that its session is over, is closed and its `closeFuture` awaited before
/// it goes back to the pool; and no statement is sent on a connection known to be closed.
enum ConnectionEnd {
    /// Whether `error` says that the server session of its connection is over, so that nothing
    /// more can be sent on it: a `FATAL` or `PANIC` error (the server closes the connection after
    /// it: PgBouncer refusing a transaction block in statement pooling, an administrator's
    /// `pg_terminate_backend`, a server shutting down), or SQLSTATE class 08 (connection exception).
    static func endsSession(_ error: any Error) -> Bool {
        guard let info = (error as? PSQLError)?.serverInfo else { return false }
        let severity = info[.severity] ?? info[.localizedSeverity]
        return severity == "FATAL" || severity == "PANIC" || info[.sqlState]?.hasPrefix("08") == true
    }

    /// Closes `connection` (when it is not closed already) and waits until it is closed for the
    /// pool too; at most `limit`, and done even when the caller is cancelled.
    static func close(_ connection: PostgresConnection, within limit: Duration) async {
        await PostgresTokenStore.uncancelled {
            _ = try? await Deadline.run(limit) {
                try? await connection.close()
                try await connection.closeFuture.get()
            }
        }
    }

    /// When `connection` has closed, waits (at most `limit`) until the pool knows: its
    /// `closeFuture`, on which the pool learns it, has completed.
    static func settle(_ connection: PostgresConnection, within limit: Duration) async {
        guard connection.isClosed else { return }
        await close(connection, within: limit)
    }

    /// The rows of `query`, run on a connection of `client`'s pool that is not known to be closed.
    /// A connection found closed when leased is given back once the pool knows, and another one
    /// leased; one that closes or whose session ends during the statement is given back the same
    /// way, and the statement's error thrown (it may have run: it is not sent again). Not bounded
    /// in itself: callers run it under ``Deadline``.
    static func rows(_ query: PostgresQuery, on client: PostgresClient, logger: Logger, settleWithin limit: Duration) async throws -> [PostgresRow] {
        // Bounded: each pass either answers, throws, or gave back a closed connection the pool
        // then drops; a pool that hands out nothing but closed ones is given up on.
        for _ in 0..<maximumClosedLeases {
            try Task.checkCancellation()
            let rows: [PostgresRow]? = try await client.withConnection { connection in
                guard !connection.isClosed else {
                    await settle(connection, within: limit)
                    return nil
                }
                do {
                    return try await connection.query(query, logger: logger).collect()
                } catch {
                    if endsSession(error) || connection.isClosed { await close(connection, within: limit) }
                    throw error
                }
            }
            if let rows { return rows }
        }
        throw OnlyClosedConnections()
    }

    /// How many closed connections in a row ``rows(_:on:logger:settleWithin:)`` takes before it gives up.
    static let maximumClosedLeases = 16

    /// The pool gave only closed connections, ``maximumClosedLeases`` in a row.
    struct OnlyClosedConnections: Error, CustomStringConvertible {
        var description: String { "the connection pool gave only connections that had closed (\(ConnectionEnd.maximumClosedLeases) in a row)" }
    }
}
