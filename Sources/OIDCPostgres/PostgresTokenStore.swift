public import Logging
public import OIDC
public import PostgresNIO

/// A `TokenStore` in PostgreSQL, for servers that run more than one instance: every instance sees
/// the same logins, and a rotating refresh token is spent once across the fleet.
///
/// ```swift
/// let client = PostgresClient(configuration: try PostgresConnectionURL.configuration(from: databaseURL))
/// let encryption = try TokenEncryption(current: TokenEncryptionKey(environmentVariable: "OIDC_TOKEN_KEY"))
/// let store = try PostgresTokenStore(client: client, encryption: encryption)
/// // with `client.run()` running in a task of its own:
/// try await store.migrate()
/// ```
///
/// **Schema** (created by ``migrate()``, which is idempotent and safe to run from every instance at
/// start-up; `oidc_logins` is the default table name):
///
/// ```sql
/// CREATE TABLE IF NOT EXISTS oidc_logins (
///     service    text        NOT NULL,
///     account    text        NOT NULL,
///     key_id     text        NOT NULL,  -- the TokenEncryptionKey the record is sealed with
///     record     bytea       NOT NULL,  -- the login, AES-256-GCM sealed (TokenEncryption)
///     updated_at timestamptz NOT NULL DEFAULT now(),
///     client_id    text,   -- the login's client (deleteLogins)
///     subject_hash bytea,  -- SHA-256 of issuer, NUL, sub: who (deleteLogins)
///     session_hash bytea,  -- SHA-256 of issuer, NUL, sid: which session at the issuer (deleteLogins)
///     PRIMARY KEY (service, account)
/// )
/// -- and an index on each of subject_hash and session_hash
/// ```
///
/// ``migrate()`` adds the last three columns and their indexes to a table made by an earlier
/// version. Logins saved before that have none of them, and a back-channel logout finds them
/// after their next save (a refresh), not before.
///
/// - **Encryption.** Every record is sealed with AES-256-GCM under the ring's current key, bound to
///   its service and account (a record copied to another row does not open). The key id column
///   lets you find the records still under an old key after a rotation
///   (`SELECT count(*) FROM oidc_logins WHERE key_id = '…'`); they keep opening while that key is
///   in the ring's `previous` keys, and each is re-sealed under the current key at its next save.
///   A record that fails authentication is an `OIDCError.Code.corruptStore` error naming the
///   row, never tokens.
/// - **Atomic saves.** ``save(_:for:)`` is one `INSERT … ON CONFLICT DO UPDATE`, committed when it
///   returns.
/// - **One lock across the fleet.** ``withLock(_:_:)`` takes a session-level advisory lock
///   (`pg_advisory_lock`) on a 64-bit key: the first 8 bytes of SHA-256 over the table name,
///   the service and the account. An advisory lock rather than `SELECT … FOR UPDATE` because the
///   lock must exist before the row does (the first save of a login) and must not hold a row lock
///   while the body calls the provider; and it is released by the server when the holder's
///   connection ends, so an instance killed while holding it never blocks the others beyond the
///   moment its TCP connection closes. Waiting is bounded by ``lockTimeout`` (`lock_timeout` on
///   the server).
/// - **Writes fenced by the lock.** The lock's connection is held for the body, and the body's
///   ``load(_:)``, ``save(_:for:)`` and ``delete(_:)`` of that login run on it (each committed at
///   once). Each of them is one statement that checks in itself that its server session is the one
///   that took the lock (`pg_backend_pid()`) and still holds it (`pg_locks`), and does nothing
///   otherwise, so the store is only ever written by the instance that holds the lock, whatever
///   stands between the client and the server.
/// - **Connection poolers.** From the lock to its release, the lock's server session stays inside
///   a transaction block (`BEGIN`, then `COMMIT AND CHAIN` after the lock and after each write,
///   `ROLLBACK` after the unlock), so a transaction pooler (PgBouncer `pool_mode=transaction`)
///   never hands it to another client while it holds the lock, and a client that goes away leaves
///   it inside a transaction, which the pooler closes, releasing the lock. A session that a pooler
///   hands over already holding the lock is refused, never re-entered. Direct connections, session
///   pooling and PgBouncer's transaction pooling work; statement pooling is refused with an
///   `OIDCError.Code.storageFailure` that says so. PostgreSQL 12 or later (`COMMIT AND CHAIN`).
/// - **Connection loss during a refresh.** The session refreshes inside the lock: it re-reads the
///   row, marks the refresh in flight in it (``lockCanBeLost`` is `true`; the attribute
///   `oidc.refresh-in-flight`: a random id and the time), calls the provider, saves the new tokens
///   (which removes the mark), then the lock is released. When the lock's connection is lost
///   meanwhile, the server releases the lock and another instance waiting for it takes it at
///   once; the first instance's save fails with `OIDCError.Code.storageFailure` rather than
///   writing without the lock, and the session saves the new tokens at once under a new lock, but
///   only over the row that still holds the refresh token it spent (a login deleted or replaced
///   meanwhile is not brought back). The instance that took the lock finds the mark and does not
///   spend the same refresh token: it waits for the new tokens (up to
///   `AuthenticatedSession.inFlightRefreshWait`, then `OIDCError.Code.temporarilyUnavailable`
///   with `retryAfter`, the login kept). Nobody is logged out, and exactly one refresh reaches the
///   provider. When the database is unreachable, the session keeps using the new tokens, reports
///   `AuthenticatedSession.storageProblem` and saves them at its next call. What no lock can
///   prevent: an instance that dies after the provider answered takes the new tokens with it, and
///   when its mark expires (three times the token client's timeout plus 60 s) the others refresh with the
///   spent token and get `invalid_grant` from a provider that rotates refresh tokens; the same
///   when the first instance cannot reach the database again within that time.
/// - **Time limits.** Every call fails with `OIDCError.Code.storageFailure` after
///   ``operationTimeout`` (a server that does not answer, a pool that cannot connect) instead of
///   hanging.
public struct PostgresTokenStore: TokenStore {
    /// The pool the store queries; run it (`client.run()`) for as long as the store is used.
    public let client: PostgresClient
    /// Seals new records and opens old ones.
    public let encryption: TokenEncryption
    /// The table, optionally schema-qualified (`oidc_logins`, `auth.oidc_logins`).
    public let table: String
    /// How long ``withLock(_:_:)`` waits for another holder before failing.
    public let lockTimeout: Duration
    /// How long any other database call may take before it fails.
    public let operationTimeout: Duration
    /// Where the store's events go (nowhere by default): reads, saves and lock waits at `trace`
    /// or `debug`, a lock lost or timed out, a connection closed to release a lock, a record that
    /// does not open at `warning`. Metadata: table, service, account, key id, durations; never a
    /// record or a token. PostgresNIO's per-query messages go here too.
    public let logger: Logger

    /// A store in `table`, through `client`.
    ///
    /// - Throws: `OIDCError.Code.invalidArgument` when `table` is not one or two lower-case SQL
    ///   identifiers (`[a-z_][a-z0-9_]*`, at most 63 bytes each, joined by a dot), or a time limit
    ///   is not positive.
    public init(
        client: PostgresClient, encryption: TokenEncryption, table: String = "oidc_logins",
        lockTimeout: Duration = .seconds(90), operationTimeout: Duration = .seconds(30),
        logger: Logger = Logger(label: "oidc.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(OIDCError) {
        guard Self.isValidTableName(table) else {
            throw OIDCError(.invalidArgument,
                "The table name must be one or two lower-case SQL identifiers joined by a dot ([a-z_][a-z0-9_]*, at most 63 bytes each), not \(table.prefix(80).debugDescription).")
        }
        guard lockTimeout > .zero, operationTimeout > .zero else {
            throw OIDCError(.invalidArgument, "The lock and operation time limits must be positive.")
        }
        self.client = client
        self.encryption = encryption
        self.table = table
        self.lockTimeout = lockTimeout
        self.operationTimeout = operationTimeout
        self.logger = logger
    }

    static func isValidTableName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { part in
            guard let first = part.utf8.first, part.utf8.count <= 63 else { return false }
            let isLetter = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: "_") }
            return isLetter(first) && part.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
    }

    /// Creates the table when it does not exist; does nothing otherwise. Safe to run from every
    /// instance at once (it takes an advisory lock of its own first).
    ///
    /// - Throws: `OIDCError.Code.storageFailure` when PostgreSQL refuses (no right to create a
    ///   table, say) or cannot be reached.
    public func migrate() async throws(OIDCError) {
        let client = client, table = quotedTable, logger = logger
        let lockKey = Self.migrationLockKey(table: self.table)
        let indexes = ["subject_hash", "session_hash"].map { ($0, Self.indexName(table: self.table, column: $0)) }
        try await PostgresFailure.within(operationTimeout, "creating", "the table \(table)") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger).drain()
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS \(unescaped: table) (
                        service text NOT NULL, account text NOT NULL, key_id text NOT NULL, record bytea NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (service, account))
                    """, logger: logger
                ).drain()
                // Back-channel logout (deleteLogins): who and which session, hashed, and the client.
                try await connection.query(
                    """
                    ALTER TABLE \(unescaped: table) ADD COLUMN IF NOT EXISTS client_id text,
                        ADD COLUMN IF NOT EXISTS subject_hash bytea, ADD COLUMN IF NOT EXISTS session_hash bytea
                    """, logger: logger
                ).drain()
                for (column, index) in indexes {
                    try await connection.query("CREATE INDEX IF NOT EXISTS \(unescaped: index) ON \(unescaped: table) (\(unescaped: column))", logger: logger).drain()
                }
            }
        }
    }

    /// The table as an SQL identifier, quoted (its parts are checked at `init`), so that a name
    /// such as `user` or `order` works too.
    var quotedTable: String { table.split(separator: ".").map { "\"\($0)\"" }.joined(separator: ".") }

    /// The log metadata of `key`'s row: names, never contents (an account that is itself a
    /// secret belongs in `TokenStoreKey(service:hashingAccount:)`).
    func metadata(_ key: TokenStoreKey, _ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = extra
        metadata["table"] = .untrusted(table)
        metadata["service"] = .untrusted(key.service, limit: 128)
        metadata["account"] = .untrusted(key.account, limit: 128)
        return metadata
    }

    /// How messages name the row of `key`: `oidc_logins row service/account`.
    func recordName(_ key: TokenStoreKey) -> String { "\(table) row \(key)" }

    /// PostgreSQL's `text` cannot hold a NUL character: such a key is refused before any query.
    func checkStorable(_ key: TokenStoreKey) throws(OIDCError) {
        guard !key.service.utf8.contains(0), !key.account.utf8.contains(0) else {
            throw OIDCError(.invalidArgument, "A store key for PostgreSQL cannot contain a NUL character (PostgreSQL text cannot hold one).")
        }
    }

    // MARK: - TokenStore

    /// `true`: the lock lives on a connection, which can break while the lock is held; writes on a
    /// lost lock are refused, and the session marks its refreshes in flight in the row.
    public var lockCanBeLost: Bool { true }

    /// The login kept under `key`, or `nil`.
    ///
    /// - Throws: `OIDCError.Code.corruptStore` naming the row when its record fails
    ///   authentication or is not a login; `OIDCError.Code.storageFailure` when it is sealed with
    ///   a key the ring does not have, or PostgreSQL fails.
    public func load(_ key: TokenStoreKey) async throws(OIDCError) -> StoredLogin? {
        try checkStorable(key)
        let key = Self.canonical(key), name = recordName(key)
        let table = quotedTable
        let rows = try await rows(for: key, "loading", name) { fence -> PostgresQuery in
            guard let fence else {
                return "SELECT record FROM \(unescaped: table) WHERE service = \(key.service) AND account = \(key.account)"
            }
            return """
                WITH \(unescaped: fence.table)
                SELECT \(unescaped: LockFence.columns),
                    (SELECT record FROM \(unescaped: table) WHERE service = \(key.service) AND account = \(key.account)) AS record
                FROM fence
                """
        }
        let found: ByteBuffer?
        do { found = try rows.first.flatMap { try $0.makeRandomAccess()["record"].decode(ByteBuffer?.self) } } catch {
            throw OIDCError(.corruptStore, "The record of \(name) is not a byte string; it was not written by PostgresTokenStore.", context: ["record": name])
        }
        guard let sealed = found else {
            logger.trace("no stored login", metadata: metadata(key))
            return nil
        }
        do {
            let plain = try encryption.open(Array(sealed.readableBytesView), record: key, location: name)
            let login = try StoredLogin(serialized: plain, path: name)
            logger.trace("login read", metadata: metadata(key))
            return login
        } catch {
            logger.warning("stored login does not open", metadata: metadata(key).merging(.failure(error)) { $1 })
            throw error
        }
    }

    /// Replaces the login under `key` in one statement, sealed under the ring's current key.
    ///
    /// - Throws: `OIDCError.Code.storageFailure` when PostgreSQL fails or does not answer; the
    ///   stored login is then the old one, or, when the connection broke after the commit, the new one.
    public func save(_ login: StoredLogin, for key: TokenStoreKey) async throws(OIDCError) {
        try checkStorable(key)
        let key = Self.canonical(key), name = recordName(key)
        let sealed = try encryption.seal(login.serialized(), record: key)
        let keyID = TokenEncryption.keyID(of: sealed) ?? ""
        let table = quotedTable, record = ByteBuffer(bytes: sealed)
        let clientID = login.clientID, subjectHash = Self.logoutHash(login.issuer, login.subject)
        let sessionHash = Self.logoutHash(login.issuer, login.sessionID)
        _ = try await rows(for: key, "saving", name, writes: true) { fence -> PostgresQuery in
            guard let fence else {
                return """
                    INSERT INTO \(unescaped: table) (service, account, key_id, record, updated_at, client_id, subject_hash, session_hash)
                    VALUES (\(key.service), \(key.account), \(keyID), \(record), now(), \(clientID), \(subjectHash), \(sessionHash))
                    ON CONFLICT (service, account) DO UPDATE
                    SET key_id = EXCLUDED.key_id, record = EXCLUDED.record, updated_at = EXCLUDED.updated_at,
                        client_id = EXCLUDED.client_id, subject_hash = EXCLUDED.subject_hash, session_hash = EXCLUDED.session_hash
                    """
            }
            // One statement: the row is written only when the fence holds.
            return """
                WITH \(unescaped: fence.table), written AS (
                    INSERT INTO \(unescaped: table) (service, account, key_id, record, updated_at, client_id, subject_hash, session_hash)
                    SELECT \(key.service), \(key.account), \(keyID), \(record), now(), \(clientID), \(subjectHash), \(sessionHash)
                    FROM fence WHERE \(unescaped: fence.passes)
                    ON CONFLICT (service, account) DO UPDATE
                    SET key_id = EXCLUDED.key_id, record = EXCLUDED.record, updated_at = EXCLUDED.updated_at,
                        client_id = EXCLUDED.client_id, subject_hash = EXCLUDED.subject_hash, session_hash = EXCLUDED.session_hash
                    RETURNING 1)
                SELECT \(unescaped: LockFence.columns), (SELECT count(*) FROM written) AS written FROM fence
                """
        }
        logger.trace("login saved", metadata: metadata(key, ["key_id": .untrusted(keyID)]))
    }

    /// Removes the login under `key`; nothing happens when there is none.
    public func delete(_ key: TokenStoreKey) async throws(OIDCError) {
        try checkStorable(key)
        let key = Self.canonical(key)
        let table = quotedTable
        _ = try await rows(for: key, "deleting", recordName(key), writes: true) { fence -> PostgresQuery in
            guard let fence else {
                return "DELETE FROM \(unescaped: table) WHERE service = \(key.service) AND account = \(key.account)"
            }
            return """
                WITH \(unescaped: fence.table), removed AS (
                    DELETE FROM \(unescaped: table) WHERE service = \(key.service) AND account = \(key.account)
                    AND EXISTS (SELECT 1 FROM fence WHERE \(unescaped: fence.passes)) RETURNING 1)
                SELECT \(unescaped: LockFence.columns), (SELECT count(*) FROM removed) AS removed FROM fence
                """
        }
        logger.trace("login deleted", metadata: metadata(key))
    }

    /// Every key with a stored login, sorted by service, then account.
    public func keys() async throws(OIDCError) -> [TokenStoreKey] {
        let client = client, table = quotedTable, logger = logger, limit = operationTimeout
        return try await PostgresFailure.within(operationTimeout, "listing", "the logins in \(self.table)") {
            let rows = try await ConnectionEnd.rows(
                "SELECT service, account FROM \(unescaped: table) ORDER BY service, account", on: client, logger: logger, settleWithin: limit)
            return try rows.map { row in
                let (service, account) = try row.decode((String, String).self)
                return TokenStoreKey(service: service, account: account)
            }
        }
    }
}
