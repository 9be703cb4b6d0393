import Foundation
import OIDC
import OIDCPostgres
import OIDCTesting
import PostgresNIO
import Testing

/// Several instances of a server on one table: each its own process, pool and session.
@Suite("PostgresTokenStore across instances: one refresh for the fleet, and connection loss", TestDatabase.available, .timeLimit(.minutes(3)))
struct PostgresFleetTests {
    static let key = TokenStoreKey(service: "com.example.backend", account: "session-1")

    /// A login of the provider's user whose access token has expired, in `store`.
    static func injectExpiredLogin(_ provider: TestProvider, into store: PostgresTokenStore) async throws -> StoredLogin {
        var tokens = try await provider.issueTokens()
        tokens.expiresAt = Date().addingTimeInterval(-30)
        return try await store.inject(tokens, issuer: provider.issuer, clientID: TestProvider.Client.default.id, key: key)
    }

    static func workerEnvironment(_ provider: TestProvider, _ store: PostgresTokenStore) -> [String: String] {
        [
            "OIDC_TABLE": store.table, "OIDC_ISSUER": provider.issuer, "OIDC_CLIENT_ID": TestProvider.Client.default.id,
            "OIDC_SERVICE": key.service, "OIDC_ACCOUNT": key.account, "OIDC_TOKEN_KEY": TestDatabase.encodedKey1, "OIDC_TOKEN_KEY_ID": TestDatabase.key1.id,
        ]
    }

    static func fingerprint(_ token: Secret) throws -> String {
        "token " + (try LibCrypto.sha256(Array(token.revealedValue.utf8))).map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }

    /// Starts `count` refresh workers, waits until each has its pool, then starts them together;
    /// returns what each printed.
    static func runRefreshWorkers(_ count: Int, environment: [String: String], whileStarted: () async throws -> Void = {}) async throws -> [String] {
        let workers = try (0..<count).map { _ in try WorkerProcess("refresh", environment: environment) }
        for worker in workers {
            let line = await worker.nextLine()
            try #require(line == "ready", "a worker did not start: \(line ?? "no output") \(worker.standardError)")
        }
        for worker in workers { worker.send("go") }
        try await whileStarted()
        var results: [String] = []
        for worker in workers {
            results.append(await worker.nextLine() ?? "no output: \(worker.standardError)")
            #expect(await worker.exitStatus() == 0, "\(worker.standardError)")
        }
        return results
    }

    static func makeSession(_ provider: TestProvider, _ store: PostgresTokenStore, _ transport: NIOHTTPTransport) async throws -> AuthenticatedSession {
        let configuration = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration()
        let client = TokenClient(provider: configuration, clientID: TestProvider.Client.default.id, transport: transport)
        return AuthenticatedSession(
            store: store, key: key, source: .refreshToken(client), transport: transport,
            allowlist: .default(for: try #require(URL(string: provider.issuer))))
    }

    @Test("8 processes find the same login expired at once: 1 refresh, the same new token for all, nobody logged out")
    func eightInstancesOneRefresh() async throws {
        try await withTestProvider { provider in
            try await TestDatabase.withStore { store, _ in
                let before = try await Self.injectExpiredLogin(provider, into: store)
                let results = try await Self.runRefreshWorkers(8, environment: Self.workerEnvironment(provider, store))

                #expect(await provider.grantCount("refresh_token") == 1)
                let stored = try #require(try await store.load(Self.key), "logged out")
                #expect(stored.tokens.refreshToken != before.tokens.refreshToken)  // rotated, and the new one kept
                #expect(results == Array(repeating: try Self.fingerprint(stored.tokens.accessToken), count: 8), "\(results)")
            }
        }
    }

    @Test("an instance killed while it holds the lock: the server releases it, the others go on with 1 refresh")
    func killedHolder() async throws {
        try await withTestProvider { provider in
            try await TestDatabase.withStore { store, _ in
                _ = try await Self.injectExpiredLogin(provider, into: store)
                let environment = Self.workerEnvironment(provider, store)
                let holder = try WorkerProcess("hold", environment: environment)
                let line = await holder.nextLine()
                try #require(line == "locked", "\(line ?? "no output") \(holder.standardError)")

                let results = try await Self.runRefreshWorkers(7, environment: environment) {
                    try await Task.sleep(for: .milliseconds(500))
                    #expect(await provider.grantCount("refresh_token") == 0)  // all waiting on the holder
                    holder.kill()
                }
                #expect(await holder.exitStatus() == -SIGKILL)
                #expect(await provider.grantCount("refresh_token") == 1)
                let stored = try #require(try await store.load(Self.key), "logged out")
                #expect(results == Array(repeating: try Self.fingerprint(stored.tokens.accessToken), count: 7), "\(results)")
            }
        }
    }

    @Test("the lock's connection is cut during the refresh: the save is refused (no write without the lock), the new tokens are used and saved at the next call, nobody is logged out")
    func lockConnectionLost() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                try await TestDatabase.withStore { store, client in
                    let before = try await Self.injectExpiredLogin(provider, into: store)
                    let session = try await Self.makeSession(provider, store, transport)
                    await provider.failNextTokenRequests(1, with: .delay(.seconds(1)))
                    let refresh = Task { try await session.validTokens() }

                    // End the backend that holds this login's lock once the refresh is at the provider (the
                    // row read), while the provider answers.
                    for _ in 0..<500 where await provider.requestCount(.token) == 0 { try await Task.sleep(for: .milliseconds(10)) }
                    try #require(await provider.requestCount(.token) == 1, "the refresh never reached the provider")
                    try #require(try await TestDatabase.terminateLockHolder(client, store, Self.key), "the lock was never seen held")

                    let tokens = try await refresh.value  // the new tokens, although the lock was lost
                    #expect(tokens.accessToken != before.tokens.accessToken)
                    #expect(await provider.grantCount("refresh_token") == 1)
                    let problem = await session.storageProblem
                    #expect(problem?.code == .storageFailure && problem?.message.contains("lock") == true, "\(String(describing: problem))")
                    #expect(try await store.load(Self.key)?.tokens.accessToken == before.tokens.accessToken)  // not written without the lock

                    // The next call saves them, under the lock again (the pool may need a moment to reconnect).
                    for _ in 0..<20 where await session.storageProblem != nil {
                        let again = try await session.validTokens()
                        #expect(again.accessToken == tokens.accessToken)
                        if await session.storageProblem != nil { try await Task.sleep(for: .milliseconds(250)) }
                    }
                    #expect(await session.storageProblem == nil)
                    let stored = try #require(try await store.load(Self.key), "logged out")
                    #expect(stored.tokens.accessToken == tokens.accessToken)
                    #expect(stored.tokens.refreshToken != before.tokens.refreshToken)
                    #expect(await provider.grantCount("refresh_token") == 1)
                }
            }
        }
    }

    @Test("the database becomes unreachable during the refresh: the new tokens are used, kept, and saved once it is back")
    func databaseUnreachable() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                try await TestDatabase.withClient { admin in
                    let database = "oidc_outage_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
                    try await admin.query("CREATE DATABASE \(unescaped: database)").drain()
                    do {
                        try await Self.outage(provider, transport, admin: admin, database: database)
                    } catch {
                        try? await admin.query("DROP DATABASE IF EXISTS \(unescaped: database) WITH (FORCE)").drain()
                        throw error
                    }
                    try await admin.query("DROP DATABASE IF EXISTS \(unescaped: database) WITH (FORCE)").drain()
                }
            }
        }
    }

    static func outage(_ provider: TestProvider, _ transport: NIOHTTPTransport, admin: PostgresClient, database: String) async throws {
        let serverURL = try #require(TestDatabase.url)
        var url = try #require(URLComponents(string: serverURL))
        url.path = "/" + database
        try await TestDatabase.withClient(url: url.string) { client in
            let store = try PostgresTokenStore(
                client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: "logins",
                operationTimeout: .seconds(5))
            try await store.migrate()
            let before = try await Self.injectExpiredLogin(provider, into: store)
            let session = try await Self.makeSession(provider, store, transport)
            await provider.failNextTokenRequests(1, with: .delay(.seconds(2)))
            let refresh = Task { try await session.validTokens() }

            // Wait until the refresh is at the provider (it holds the lock and has read the row), however slow the machine.
            for _ in 0..<500 where await provider.requestCount(.token) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            try #require(await provider.requestCount(.token) == 1, "the refresh never reached the provider")
            try await admin.query("ALTER DATABASE \(unescaped: database) WITH ALLOW_CONNECTIONS false").drain()
            try await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(database)").drain()

            let tokens = try await refresh.value  // the new tokens, although they could not be saved
            #expect(tokens.accessToken != before.tokens.accessToken)
            let problem = await session.storageProblem
            #expect(problem?.code == .storageFailure, "\(String(describing: problem))")
            #expect(try await session.login != nil)

            try await admin.query("ALTER DATABASE \(unescaped: database) WITH ALLOW_CONNECTIONS true").drain()
            // The session saves them again at its next call (the pool may need a few tries to reconnect).
            for _ in 0..<60 where await session.storageProblem != nil {
                // The pool may refuse at first (its circuit breaker opened during the outage): try again.
                if let again = try? await session.validTokens() { #expect(again.accessToken == tokens.accessToken) }
                if await session.storageProblem != nil { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(await session.storageProblem == nil)
            let stored = try #require(try await store.load(Self.key), "logged out")
            #expect(stored.tokens.accessToken == tokens.accessToken)
            #expect(stored.tokens.refreshToken != before.tokens.refreshToken)
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }
}
