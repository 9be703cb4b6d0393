import Foundation
import OIDC
import OIDCPostgres
import OIDCTesting
import OIDCTestSupport
import PostgresNIO
import Testing

/// Several instances of a server on one table: each its own process, pool and session.
@Suite("PostgresTokenStore across instances: one refresh for the fleet, and connection loss", TestDatabase.available, .timeLimit(.scaledMinutes(3)))
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

    static func makeSession(
        _ provider: TestProvider, _ store: PostgresTokenStore, _ transport: NIOHTTPTransport, inFlightRefreshWait: Duration = .scaled(.seconds(10))
    ) async throws -> AuthenticatedSession {
        try await SessionFixture(provider: provider, transport: transport, store: store, key: key)
            .session(options: AuthenticatedSession.Options(inFlightRefreshWait: inFlightRefreshWait))
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

    @Test("the lock's connection is cut during the refresh: the refresh was marked in flight, the save on the lost lock is refused, then done at once under a new lock; nobody is logged out")
    func lockConnectionLost() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                try await TestDatabase.withStore { plainStore, client in
                    let log = LogRecorder()
                    let store = try PostgresTokenStore(client: plainStore.client, encryption: plainStore.encryption, table: plainStore.table, logger: log.logger("oidc.store"))
                    let before = try await Self.injectExpiredLogin(provider, into: store)
                    let session = try await Self.makeSession(provider, store, transport)
                    await provider.failNextTokenRequests(1, with: .delay(.scaled(.seconds(1))))
                    let refresh = Task { try await session.validTokens() }

                    // End the backend that holds this login's lock once the refresh is at the provider (the
                    // row read), while the provider answers.
                    try await provider.waitForRequests(.token)
                    try #require(await provider.requestCount(.token) == 1, "the refresh never reached the provider")
                    // Marked in flight in the row before the refresh token was sent.
                    let marked = try #require(try await store.load(Self.key))
                    #expect(marked.refreshMark != nil, "\(marked.attributes)")
                    #expect(marked.tokens.refreshToken == before.tokens.refreshToken)
                    #expect(try await session.login?.refreshMark == nil)  // never shown
                    try #require(try await TestDatabase.terminateLockHolder(client, store, Self.key), "the lock was never seen held")

                    let tokens = try await refresh.value
                    #expect(tokens.accessToken != before.tokens.accessToken)
                    // The save on the lost lock was refused (the store said so), then done under a new lock.
                    #expect(log.all.contains { $0.level == .warning && $0.text.contains("refused") && $0.text.contains("action=saving") }, "\(log.all.map(\.text))")
                    #expect(await session.storageProblem == nil)
                    let stored = try #require(try await store.load(Self.key), "logged out")
                    #expect(stored.tokens.accessToken == tokens.accessToken)
                    #expect(stored.tokens.refreshToken != before.tokens.refreshToken)
                    #expect(stored.refreshMark == nil)
                    #expect(await provider.grantCount("refresh_token") == 1)
                    #expect(try await session.send(HTTPRequest(url: try #require(URL(string: provider.protectedResourceURL)))).status == 200)
                }
            }
        }
    }

    /// Two instances of a server on one table, each with its own pool and session, over a login whose
    /// access token has expired: `body` gets the provider, the first instance's store, an admin
    /// client, the login as injected, and the two sessions.
    static func withTwoInstances(
        secondWait: Duration = .scaled(.seconds(10)),
        _ body: @Sendable (TestProvider, PostgresTokenStore, PostgresClient, StoredLogin, AuthenticatedSession, AuthenticatedSession) async throws -> Void
    ) async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                try await TestDatabase.withStore { store, admin in
                    try await TestDatabase.withClient { otherClient in
                        let before = try await Self.injectExpiredLogin(provider, into: store)
                        let otherStore = try PostgresTokenStore(client: otherClient, encryption: store.encryption, table: store.table)
                        let first = try await Self.makeSession(provider, store, transport)
                        let second = try await Self.makeSession(provider, otherStore, transport, inFlightRefreshWait: secondWait)
                        try await body(provider, store, admin, before, first, second)
                    }
                }
            }
        }
    }

    @Test("the lock is lost while another instance waits for it: that instance finds the refresh marked in flight and waits for its tokens instead of spending the same refresh token; 1 refresh, nobody logged out")
    func lockLostWhileAnotherWaits() async throws {
        // Room for a loaded machine: the point is that the second waits rather than spends, not how long.
        try await Self.withTwoInstances(secondWait: .scaled(.seconds(90))) { provider, store, admin, before, first, second in
            // The first refresh waits at the provider before it is handled (its token not spent yet).
            await provider.failNextTokenRequests(1, with: .delay(.scaled(.seconds(2))))
            let firstRefresh = Task { try await first.validTokens() }
            try await provider.waitForRequests(.token)
            try #require(await provider.requestCount(.token) == 1, "the first refresh never reached the provider")
            let secondRefresh = Task { try await second.validTokens() }
            try #require(try await TestDatabase.waitForLockWaiter(admin, store, Self.key), "the second instance never waited")
            try #require(try await TestDatabase.terminateLockHolder(admin, store, Self.key))

            // The second takes the lock at once, finds the mark, and waits rather than refresh.
            let tokens = try await firstRefresh.value
            #expect(tokens.accessToken != before.tokens.accessToken)
            #expect(try await secondRefresh.value.accessToken == tokens.accessToken)
            #expect(await provider.grantCount("refresh_token") == 1)
            #expect(await provider.requestCount(.token) == 1)  // the spent token was never sent again
            let stored = try #require(try await store.load(Self.key), "logged out")
            #expect(stored.tokens.accessToken == tokens.accessToken)
            #expect(stored.refreshMark == nil)
            // The tokens are alive at the provider (no reuse was detected, nothing revoked), for both.
            let resource = HTTPRequest(url: try #require(URL(string: provider.protectedResourceURL)))
            #expect(try await first.send(resource).status == 200)
            #expect(try await second.send(resource).status == 200)
            #expect(await second.storageProblem == nil)
            #expect(await first.storageProblem == nil)
            // And they refresh again normally: the rotated refresh token is the live one.
            #expect(try await second.validTokens(forceRefresh: true).accessToken != tokens.accessToken)
            #expect(await provider.grantCount("refresh_token") == 2)
        }
    }

    @Test("a fresh mark of another instance's refresh: no refresh request is sent; the caller gets temporarilyUnavailable with retryAfter and the login is kept; a mark older than a refresh can take is refreshed over")
    func foreignMark() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                try await TestDatabase.withStore { store, _ in
                    let injected = try await Self.injectExpiredLogin(provider, into: store)
                    func mark(ageSeconds: Double) async throws {
                        let began = Int64(((Date().timeIntervalSince1970 - ageSeconds) * 1000).rounded())
                        var marked = injected
                        marked.refreshMark = RefreshMark(id: "another-instance", began: Date(timeIntervalSince1970: TimeInterval(began) / 1000))
                        try await store.save(marked, for: Self.key)
                    }
                    let session = try await Self.makeSession(provider, store, transport, inFlightRefreshWait: .milliseconds(300))

                    try await mark(ageSeconds: 5)
                    let error = try await #require(throws: OIDCError.self) { try await session.validTokens() }
                    #expect(error.code == .temporarilyUnavailable && error.message.contains("Another instance"), "\(error)")
                    // Three times the token client's 30 s timeout plus 60 s, less the mark's 5 s age.
                    let retryAfter = try #require(error.context["retryAfter"].flatMap { Int($0) })
                    #expect((140...146).contains(retryAfter), "\(retryAfter)")
                    #expect(await provider.requestCount(.token) == 0)
                    #expect(try await store.load(Self.key)?.refreshMark?.id == "another-instance")  // left as it was

                    // A mark older than a refresh can take: that refresh ended without saving; refresh.
                    try await mark(ageSeconds: 200)
                    let tokens = try await session.validTokens()
                    #expect(tokens.accessToken != injected.tokens.accessToken)
                    #expect(await provider.grantCount("refresh_token") == 1)
                    let stored = try #require(try await store.load(Self.key))
                    #expect(stored.tokens.accessToken == tokens.accessToken && stored.refreshMark == nil)
                }
            }
        }
    }

    @Test("a stale mark over a refresh token that is really dead: the rejection logs out (a mark never keeps a revoked login alive)")
    func staleMarkOverDeadLogin() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                try await TestDatabase.withStore { store, _ in
                    let injected = try await Self.injectExpiredLogin(provider, into: store)
                    let session = try await Self.makeSession(provider, store, transport)
                    // Revoked at the provider; a mark from a refresh that ended 200 s ago without saving.
                    let configuration = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration()
                    try await TokenClient(provider: configuration, clientID: TestProvider.Client.default.id, transport: transport)
                        .revoke(try #require(injected.tokens.refreshToken), hint: .refreshToken)
                    let began = Int64(((Date().timeIntervalSince1970 - 200) * 1000).rounded())
                    var marked = injected
                    marked.refreshMark = RefreshMark(id: "another-instance", began: Date(timeIntervalSince1970: TimeInterval(began) / 1000))
                    try await store.save(marked, for: Self.key)

                    let error = try await #require(throws: OIDCError.self) { try await session.validTokens() }
                    #expect(error.code == .providerError && error.providerError?.error == "invalid_grant", "\(error)")
                    #expect(try await store.load(Self.key) == nil)
                    #expect(try await session.login == nil)
                }
            }
        }
    }

    @Test("a logout by another instance while the lock is lost is not undone: the refreshed tokens are not saved over the deleted login but revoked, and the refresh ends in notLoggedIn")
    func logoutWhileLockLost() async throws {
        try await Self.withTwoInstances { provider, store, admin, _, first, second in
            await provider.failNextTokenRequests(1, with: .delay(.scaled(.seconds(2))))
            let firstRefresh = Task { try await first.validTokens() }
            try await provider.waitForRequests(.token)
            try #require(await provider.requestCount(.token) == 1, "the refresh never reached the provider")
            let logout = Task { try await second.logout(revoke: false) }
            try #require(try await TestDatabase.waitForLockWaiter(admin, store, Self.key), "the logout never waited")
            try #require(try await TestDatabase.terminateLockHolder(admin, store, Self.key))
            try await logout.value

            let error = try await #require(throws: OIDCError.self) { try await firstRefresh.value }
            #expect(error.code == .notLoggedIn, "\(error)")
            #expect(try await store.load(Self.key) == nil)  // still logged out
            #expect(try await first.login == nil)
            #expect(await provider.grantCount("refresh_token") == 1)
            #expect(await provider.requestCount(.revocation) == 1)  // the refreshed tokens, revoked
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
                operationTimeout: .scaled(.seconds(5)))
            try await store.migrate()
            let before = try await Self.injectExpiredLogin(provider, into: store)
            let session = try await Self.makeSession(provider, store, transport)
            await provider.failNextTokenRequests(1, with: .delay(.scaled(.seconds(2))))
            let refresh = Task { try await session.validTokens() }

            // Wait until the refresh is at the provider (it holds the lock and has read the row), however slow the machine.
            try await provider.waitForRequests(.token)
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
            for _ in 0..<TestTime.scaled(60) where await session.storageProblem != nil {
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
