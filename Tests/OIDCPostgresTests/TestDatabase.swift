import Foundation
import Logging
import OIDC
import OIDCPostgres
import OIDCTesting
import OIDCTestSupport
import PostgresNIO
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server the tests use: `OIDC_TEST_DATABASE_URL`, which `scripts/postgres.sh run` (in
/// `make test` and `.ci/run`) sets after starting a throw-away cluster on 127.0.0.1.
enum TestDatabase {
    static let url = ProcessInfo.processInfo.environment["OIDC_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Skips a test, saying why, when no server was started.
    static let available = Testing.ConditionTrait.enabled(
        if: url != nil,
        "OIDC_TEST_DATABASE_URL is not set: run the tests through `scripts/postgres.sh run swift test` (or `make test`), which starts a throw-away PostgreSQL on 127.0.0.1 (Debian: apt-get install postgresql)"
    )

    static let key1 = try! TokenEncryptionKey(id: "key-1", bytes: Array(repeating: 0x11, count: 32))
    static let key2 = try! TokenEncryptionKey(id: "key-2", bytes: Array(repeating: 0x22, count: 32))
    static let encodedKey1 = String(repeating: "11", count: 32)

    /// A fresh table name, so that tests running at once never see each other's rows.
    static func newTable() -> String { "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    /// Runs `body` with a running client on `url` (the test server by default), then shuts it down.
    static func withClient<T: Sendable>(
        url: String? = nil, maximumConnections: Int = 8, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        var configuration = try PostgresConnectionURL.configuration(from: try #require(url ?? self.url))
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .scaled(.seconds(5))
        let client = PostgresClient(configuration: configuration)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// Runs `body` with a migrated store in a new table, dropped afterwards.
    static func withStore<T: Sendable>(
        encryption: TokenEncryption? = nil, lockTimeout: Duration = .seconds(30),
        _ body: @Sendable (PostgresTokenStore, PostgresClient) async throws -> T
    ) async throws -> T {
        try await withClient { client in
            let store = try PostgresTokenStore(
                client: client, encryption: try encryption ?? TokenEncryption(current: key1), table: newTable(), lockTimeout: lockTimeout)
            try await store.migrate()
            do {
                let result = try await body(store, client)
                try await client.query("DROP TABLE \(unescaped: store.table)").drain()
                return result
            } catch {
                try? await client.query("DROP TABLE \(unescaped: store.table)").drain()
                throw error
            }
        }
    }

    /// A login as a session keeps it.
    static func login(_ access: String = "access-1", refresh: String = "refresh-1", attributes: [String: String] = [:]) -> StoredLogin {
        StoredLogin(
            tokens: TokenSet(
                accessToken: Secret(access), refreshToken: Secret(refresh), idToken: Secret("id-1"),
                expiresAt: Date(timeIntervalSince1970: 1_800_003_600), scopes: ["openid", "offline_access"],
                receivedAt: Date(timeIntervalSince1970: 1_800_000_000)
            ),
            issuer: "https://issuer.example", clientID: "client-1", subject: "user-1", attributes: attributes
        )
    }

    /// The sealed record of `key`, as stored.
    static func rawRecord(_ client: PostgresClient, _ store: PostgresTokenStore, _ key: TokenStoreKey) async throws -> (keyID: String, record: [UInt8])? {
        let rows = try await client.query(
            "SELECT key_id, record FROM \(unescaped: store.table) WHERE service = \(key.service) AND account = \(key.account)")
        for try await (keyID, record) in rows.decode((String, ByteBuffer).self) { return (keyID, Array(record.readableBytesView)) }
        return nil
    }
}

/// PgBouncer in front of the test server, which `scripts/postgres.sh run` starts when it is
/// installed (`OIDC_TEST_PGBOUNCER_URL`, the transaction pool's URL); each pool is a database of it.
extension TestDatabase {
    enum Pool: String {
        /// `pool_mode=transaction`, 2 server sessions.
        case transaction = "oidc_transaction"
        /// `pool_mode=transaction`, 1 server session that every client shares.
        case transactionOneSession = "oidc_transaction1"
        case session = "oidc_session"
        case statement = "oidc_statement"
    }

    static let poolerURL = ProcessInfo.processInfo.environment["OIDC_TEST_PGBOUNCER_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// Skips a test, saying why, when no PgBouncer was started.
    static let poolerAvailable = Testing.ConditionTrait.enabled(
        if: url != nil && poolerURL != nil,
        "OIDC_TEST_PGBOUNCER_URL is not set: run the tests through `scripts/postgres.sh run swift test` (or `make test`) with PgBouncer installed (Debian: apt-get install pgbouncer), which then starts it in front of the throw-away PostgreSQL"
    )

    /// The URL of `pool` at the test PgBouncer.
    static func url(of pool: Pool) throws -> String {
        let base = try #require(poolerURL)
        var components = try #require(URLComponents(string: base))
        components.path = "/" + pool.rawValue
        return try #require(components.string)
    }

    /// Runs `body` with a migrated store in a new table (`admin` on a direct connection) and
    /// `count` more stores of that table, each with its own client (of `maximumConnections`)
    /// through PgBouncer's `pool`.
    static func withPooledStores<T: Sendable>(
        _ pool: Pool, count: Int, lockTimeout: Duration = .seconds(30), operationTimeout: Duration = .seconds(30), maximumConnections: Int = 4,
        _ body: @Sendable (_ stores: [PostgresTokenStore], _ admin: PostgresClient) async throws -> T
    ) async throws -> T {
        let url = try url(of: pool)
        return try await withStore { direct, admin in
            @Sendable func nest(_ stores: [PostgresTokenStore]) async throws -> T {
                guard stores.count < count else { return try await body(stores, admin) }
                return try await withClient(url: url, maximumConnections: maximumConnections) { client in
                    let store = try PostgresTokenStore(
                        client: client, encryption: direct.encryption, table: direct.table, lockTimeout: lockTimeout, operationTimeout: operationTimeout)
                    return try await nest(stores + [store])
                }
            }
            return try await nest([])
        }
    }

    /// For statements sent on a connection of the tests' own (PostgresNIO asks for a logger there).
    static let logger = Logger(label: "oidc.test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The pid of the server session that holds `key`'s lock, if one does.
    static func lockHolder(_ admin: PostgresClient, _ store: PostgresTokenStore, _ key: TokenStoreKey) async throws -> Int32? {
        let rows = try await admin.query("SELECT pid FROM pg_locks WHERE granted AND \(unescaped: lockCondition(store, key))")
        for try await pid in rows.decode(Int32.self) { return pid }
        return nil
    }
}

extension TestDatabase {
    /// The pg_locks condition for `key`'s advisory lock in `store`'s table.
    static func lockCondition(_ store: PostgresTokenStore, _ key: TokenStoreKey) -> String {
        let lockKey = PostgresTokenStore.advisoryLockKey(table: store.table, for: key)
        let high = Int64(UInt32(truncatingIfNeeded: lockKey >> 32)), low = Int64(UInt32(truncatingIfNeeded: lockKey))
        return "locktype = 'advisory' AND objsubid = 1 AND classid::bigint = \(high) AND objid::bigint = \(low)"
    }

    /// Ends the server session that holds `key`'s lock, waiting up to 2 s (scaled) for one to hold
    /// it; whether one was ended.
    static func terminateLockHolder(_ client: PostgresClient, _ store: PostgresTokenStore, _ key: TokenStoreKey) async throws -> Bool {
        for _ in 0..<TestTime.scaled(100) {
            let rows = try await client.query(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE granted AND \(unescaped: lockCondition(store, key))")
            for try await ended in rows.decode(Bool.self) where ended { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Waits up to 5 s (scaled) until some session waits for `key`'s lock; whether one does.
    static func waitForLockWaiter(_ client: PostgresClient, _ store: PostgresTokenStore, _ key: TokenStoreKey) async throws -> Bool {
        for _ in 0..<TestTime.scaled(250) {
            let rows = try await client.query("SELECT count(*) FROM pg_locks WHERE NOT granted AND \(unescaped: lockCondition(store, key))")
            for try await count in rows.decode(Int64.self) where count > 0 { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

/// How many tasks are inside a lock at once.
final class LockCounter: Sendable {
    private let state = Mutex((inside: 0, maximum: 0, entries: 0))

    func enter() { state.withLock { $0.inside += 1; $0.maximum = max($0.maximum, $0.inside); $0.entries += 1 } }
    func leave() { state.withLock { $0.inside -= 1 } }
    var snapshot: (inside: Int, maximum: Int, entries: Int) { state.withLock { $0 } }
}

/// A running `oidc-postgres-worker` (killed after a scaled 60 s): its lines, its exit status (minus
/// the signal when killed). Its replay store's operationTimeout is the tests' scaled 5 s.
struct WorkerProcess: Sendable {
    let process: HelperProcess

    init(_ mode: String, environment: [String: String]) throws {
        process = try HelperProcess(
            "oidc-postgres-worker", [mode], environment: ["OIDC_OPERATION_TIMEOUT": "\(TestTime.scaled(5))"].merging(environment) { $1 },
            writesInput: true, watchdog: .scaled(.seconds(60)))
    }

    var pid: Int32 { process.pid }
    var standardError: String { process.standardError }
    func send(_ line: String) { process.send(line) }
    func kill() { process.kill() }

    /// The next line the worker prints (`nil` when it exits first or after the watchdog).
    func nextLine() async -> String? { await process.nextLine() }

    /// The exit status (minus the signal when killed); the worker is killed after the watchdog.
    func exitStatus() async -> Int32 {
        switch await process.exitStatus() {
        case .exited(let code): code
        case .signalled(let signal): -signal
        case .timedOut: -1
        }
    }
}
