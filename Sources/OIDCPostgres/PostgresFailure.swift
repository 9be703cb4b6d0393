internal import OIDC
internal import PostgresNIO

/// Turns what PostgresNIO throws into an `OIDCError` that says what failed and what to do, and
/// bounds every database call in time.
///
/// Messages carry the SQLSTATE and the server's primary message, never a query's parameters, the
/// server's `detail` (which can quote row values) or anything of the record.
enum PostgresFailure {
    /// SQLSTATE `55P03`: `lock_timeout` expired while waiting for the advisory lock.
    static let lockNotAvailable = "55P03"
    /// SQLSTATE `42P01`: the table does not exist (`migrate()` was not run).
    static let undefinedTable = "42P01"

    /// An `OIDCError.Code.storageFailure` for `error`, met while `action` (`"loading"`) `record`.
    static func storageError(_ error: any Error, _ action: String, _ record: String) -> OIDCError {
        if let error = error as? OIDCError { return error }
        if error is CancellationError { return OIDCError(.cancelled, "Cancelled while \(action) \(record).") }
        guard let error = error as? PSQLError else {
            return OIDCError(
                .storageFailure,
                "PostgreSQL failed or could not be reached while \(action) \(record) (\(type(of: error))): check that the server is up and reachable.",
                context: ["record": record])
        }
        var context = ["record": record, "postgresError": error.code.description]
        if let info = error.serverInfo {
            let state = info[.sqlState] ?? "?"
            context["sqlState"] = state
            let message = info[.message] ?? "no message"
            if state == undefinedTable {
                return OIDCError(
                    .storageFailure,
                    "The token table does not exist while \(action) \(record): run PostgresTokenStore.migrate() once (it is idempotent). PostgreSQL said: \(message) (\(state)).",
                    context: context)
            }
            return OIDCError(.storageFailure, "PostgreSQL refused \(action) \(record): \(message) (SQLSTATE \(state)).", context: context)
        }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return OIDCError(
                .storageFailure,
                "Lost or could not open the connection to PostgreSQL while \(action) \(record) (\(error.code)): check that the server is up and reachable; nothing was changed by this call unless it was a save that PostgreSQL had already committed.",
                context: context)
        default:
            return OIDCError(.storageFailure, "PostgreSQL failed while \(action) \(record) (\(error.code)).", context: context)
        }
    }

    /// Runs `operation`, failing with `OIDCError.Code.storageFailure` when it takes longer than
    /// `limit` (a server that does not answer, a pool that cannot connect, a statement on a
    /// connection that died). Cancelling the caller cancels the operation.
    @discardableResult
    static func within<T: Sendable>(
        _ limit: Duration, _ action: String, _ record: String, _ operation: @escaping @Sendable () async throws -> T
    ) async throws(OIDCError) -> T {
        do {
            return try await Deadline.run(limit, operation)
        } catch is Deadline.Expired {
            throw OIDCError(
                .storageFailure,
                "PostgreSQL did not answer within \(limit) while \(action) \(record): check that the server is up and reachable, and that it offers TLS (the database URL requires TLS unless it says sslmode=disable).",
                context: ["record": record])
        } catch {
            throw storageError(error, action, record)
        }
    }
}
