internal import Logging
public import OIDC
internal import PostgresNIO

extension PostgresTokenStore {
    /// Deletes the logins `selector` matches (a back-channel logout's user or session) in one
    /// `DELETE`, committed when it returns: every instance of the fleet sees them gone at once.
    /// Returns how many rows it deleted.
    ///
    /// The statement finds the rows by the columns ``save(_:for:)`` writes beside the sealed
    /// record (`client_id`, and SHA-256 of the issuer with `sub`, and with `sid`), never by opening
    /// records. With both `sub` and `sid`, a login saved without a session id matches by `sub`,
    /// as `LoginSelector.matches(_:)` says. Logins saved before ``migrate()`` added those columns
    /// are found after their next save.
    ///
    /// What one statement cannot do: a refresh of a matching login that holds its lock at that
    /// moment (on another instance) saves its new tokens afterwards, and so writes the login back.
    /// When that matters, call this twice, ``lockTimeout`` apart, or delete each key under
    /// ``withLock(_:_:)``.
    ///
    /// - Throws: `OIDCError.Code.storageFailure` when PostgreSQL fails or does not answer.
    public func deleteLogins(_ selector: LoginSelector) async throws -> Int {
        let client = client, table = quotedTable, logger = logger, limit = operationTimeout
        let subject = Self.logoutHash(selector.issuer, selector.subject), session = Self.logoutHash(selector.issuer, selector.sessionID)
        let clientID = selector.clientID
        let deleted = try await PostgresFailure.within(operationTimeout, "deleting", "the logins of a logout in \(self.table)") {
            let rows = try await ConnectionEnd.rows(
                """
                WITH removed AS (
                    DELETE FROM \(unescaped: table)
                    WHERE (\(clientID)::text IS NULL OR client_id = \(clientID)::text)
                    AND (\(subject)::bytea IS NULL OR subject_hash = \(subject)::bytea)
                    AND (\(session)::bytea IS NULL OR session_hash = \(session)::bytea
                         OR (session_hash IS NULL AND \(subject)::bytea IS NOT NULL))
                    RETURNING 1)
                SELECT count(*) FROM removed
                """, on: client, logger: logger, settleWithin: limit)
            return try rows.first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
        logger.debug("logins deleted by a logout", metadata: ["table": .untrusted(table), "deleted": .stringConvertible(deleted)])
        return deleted
    }

    /// SHA-256 of the issuer, a NUL and `value`; `nil` without a value.
    static func logoutHash(_ issuer: String, _ value: String?) -> ByteBuffer? {
        guard let value else { return nil }
        guard let digest = try? LibCrypto.sha256(Array(issuer.utf8) + [0] + Array(value.utf8)) else { return nil }
        return ByteBuffer(bytes: digest)
    }

    /// `oidc_` and 16 hex digits of SHA-256 over the table and the column: within PostgreSQL's 63
    /// bytes, and never another table's index.
    static func indexName(table: String, column: String) -> String {
        let digest = (try? LibCrypto.sha256(Array("oidc-token-store-index\u{0}\(table)\u{0}\(column)".utf8))) ?? []
        return "oidc_" + digest.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
