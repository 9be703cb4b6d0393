import Foundation
import OIDC
import OIDCPostgres
import OIDCTesting
import OIDCTestSupport
import PostgresNIO
import Testing

/// The store behind a real PgBouncer (`scripts/postgres.sh` starts one in front of the test server):
/// in transaction mode the lock's server session must never serve another client while the lock is
/// held, a second instance must never be granted the lock again on that session, and a statement
/// that runs without the lock must not write. One test at a time: they share PgBouncer's pools.
@Suite(
    "PostgresTokenStore behind PgBouncer: transaction pooling pinned and fenced, statement pooling refused, session pooling as it is",
    TestDatabase.available, TestDatabase.poolerAvailable, .serialized, .timeLimit(.scaledMinutes(3)))
struct PostgresPoolerTests {
    static let key = TokenStoreKey(service: "com.example.backend", account: "pooled")

    @Test("transaction pooling, one server session for every client: a second instance handed the session that holds the lock does not get the lock, and the holder's writes go on")
    func secondInstanceOnTheLockSession() async throws {
        try await TestDatabase.withPooledStores(.transactionOneSession, count: 2) { stores, admin in
            let first = stores[0]
            let second = try PostgresTokenStore(
                client: stores[1].client, encryption: first.encryption, table: first.table, lockTimeout: .seconds(1), operationTimeout: .seconds(2))
            let counter = LockCounter()
            let refused = try await first.withLock(Self.key) { () async throws -> OIDCError? in
                counter.enter()
                defer { counter.leave() }
                // The pooler's only server session holds the lock: the second instance can only run there.
                let refused = await #expect(throws: OIDCError.self) {
                    try await second.withLock(Self.key) {
                        counter.enter()
                        counter.leave()
                    }
                }
                try await first.save(TestDatabase.login("access-first"), for: Self.key)
                #expect(try await first.load(Self.key)?.tokens.accessToken == Secret("access-first"))
                return refused
            }
            #expect(counter.snapshot.maximum == 1 && counter.snapshot.entries == 1, "\(counter.snapshot)")
            #expect(refused?.code == .storageFailure, "\(String(describing: refused))")
            // Released on the session that took it: nobody holds it, and the second instance takes it now.
            #expect(try await TestDatabase.lockHolder(admin, first, Self.key) == nil)
            #expect(try await second.withLock(Self.key) { try await second.load(Self.key)?.tokens.accessToken } == Secret("access-first"))
        }
    }

    @Test("transaction pooling: 6 tasks of two instances count to 30 under the lock, never two inside at once, every increment kept")
    func excludesThroughTransactionPooling() async throws {
        try await TestDatabase.withPooledStores(.transaction, count: 2) { stores, admin in
            try await Self.countUnderTheLock(stores)
            #expect(try await TestDatabase.lockHolder(admin, stores[0], Self.key) == nil)
        }
    }

    @Test("transaction pooling: a server session handed over while it still holds the login's lock (another client left it there) is refused, never re-entered")
    func orphanedLockRefused() async throws {
        try await TestDatabase.withPooledStores(.transactionOneSession, count: 1) { stores, admin in
            let store = stores[0]
            let lockKey = PostgresTokenStore.advisoryLockKey(table: store.table, for: Self.key)
            try await TestDatabase.withClient(url: try TestDatabase.url(of: .transactionOneSession), maximumConnections: 1) { other in
                // Another client takes the lock outside a transaction: the only server session keeps it when given back.
                try await other.query("SELECT pg_advisory_lock(\(lockKey))").drain()
                let counter = LockCounter()
                let refused = await #expect(throws: OIDCError.self) {
                    try await store.withLock(Self.key) {
                        counter.enter()
                        counter.leave()
                    }
                }
                #expect(counter.snapshot.entries == 0)
                #expect(
                    refused?.code == .storageFailure && refused?.message.contains("already held") == true
                        && refused?.message.contains("session pooling") == true, "\(String(describing: refused))")
                #expect(try await TestDatabase.lockHolder(admin, store, Self.key) != nil)  // not taken over either
                try await other.query("SELECT pg_advisory_unlock_all()").drain()
                #expect(try await store.withLock(Self.key) { 3 } == 3)
                #expect(try await TestDatabase.lockHolder(admin, store, Self.key) == nil)
            }
        }
    }

    @Test("transaction pooling: once the lock's server session serves another client anyway (its transaction block ended), the holder's save, load and delete are refused by the statements themselves; nothing is written without the lock")
    func fenceAfterHandOver() async throws {
        try await TestDatabase.withPooledStores(.transaction, count: 1) { stores, admin in
            let store = stores[0]
            try await store.save(TestDatabase.login("access-before"), for: Self.key)
            try await TestDatabase.withClient(url: try TestDatabase.url(of: .transaction), maximumConnections: 2) { occupier in
                let refused = try await store.withLock(Self.key) { () async throws -> OIDCError? in
                    let holder = try #require(try await TestDatabase.lockHolder(admin, store, Self.key))
                    // What a pooler that ignores the transaction block would do: the session goes back to the pool,
                    let lockConnection = try #require(store.lockConnectionForTesting(Self.key))
                    try await lockConnection.query("COMMIT", logger: TestDatabase.logger).drain()
                    // and another client gets it, inside a transaction of its own.
                    return try await Self.whileSession(holder, isTakenBy: occupier) {
                        let refused = await #expect(throws: OIDCError.self) {
                            try await store.save(TestDatabase.login("access-unlocked"), for: Self.key)
                        }
                        await #expect(throws: OIDCError.self) { try await store.load(Self.key) }
                        await #expect(throws: OIDCError.self) { try await store.delete(Self.key) }
                        return refused
                    }
                }
                #expect(
                    refused?.code == .storageFailure && refused?.message.contains("moved this connection to another server session") == true,
                    "\(String(describing: refused))")
            }
            #expect(try await TestDatabase.lockHolder(admin, store, Self.key) == nil)
            #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-before"))
            #expect(try await store.withLock(Self.key) { 5 } == 5)
        }
    }

    @Test("transaction pooling: an instance cancelled while it waits for the lock leaves no lock behind (PgBouncer closes a server session its client left inside a transaction)")
    func cancelledWaiterLeavesNoLock() async throws {
        try await TestDatabase.withPooledStores(.transaction, count: 2) { stores, admin in
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await stores[0].withLock(Self.key) {
                    holding.yield()
                    for await _ in release { break }
                }
            }
            for await _ in held { break }
            let waiter = Task { try await stores[1].withLock(Self.key) { 1 } }
            try #require(try await TestDatabase.waitForLockWaiter(admin, stores[0], Self.key))
            waiter.cancel()
            let cancelled = await waiter.result
            #expect(throws: OIDCError.self) { try cancelled.get() }
            releasing.yield()
            try await holder.value
            // The cancelled statement is not granted the lock later on a session left in the pool.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await TestDatabase.lockHolder(admin, stores[0], Self.key) == nil)
            #expect(try await stores[0].withLock(Self.key) { 2 } == 2)
            #expect(try await stores[1].withLock(Self.key) { 3 } == 3)
        }
    }

    @Test("statement pooling: withLock is refused, saying to connect directly or through session or transaction pooling; loads and saves outside a lock work")
    func statementPoolingRefused() async throws {
        try await TestDatabase.withPooledStores(.statement, count: 1) { stores, admin in
            let store = stores[0]
            try await store.save(TestDatabase.login("access-1"), for: Self.key)
            let refused = await #expect(throws: OIDCError.self) { try await store.withLock(Self.key) { 1 } }
            #expect(
                refused?.code == .storageFailure && refused?.message.contains("statement pooling") == true
                    && refused?.message.contains("session pooling") == true, "\(String(describing: refused))")
            #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-1"))
            #expect(try await TestDatabase.lockHolder(admin, store, Self.key) == nil)
        }
    }

    @Test("statement pooling, a pool of one connection: each refusal's connection (PgBouncer closed it) goes back to the pool only once the pool knows, so the load and save after each of 10 refusals never get a dead connection (which would leave them unanswered until operationTimeout)")
    func statementPoolingRefusalLeavesNoDeadConnection() async throws {
        try await TestDatabase.withPooledStores(.statement, count: 1, operationTimeout: .scaled(.seconds(5)), maximumConnections: 1) { stores, admin in
            let store = stores[0]
            try await store.save(TestDatabase.login("access-0"), for: Self.key)
            for round in 1...10 {
                let refused = await #expect(throws: OIDCError.self) { try await store.withLock(Self.key) { round } }
                #expect(refused?.message.contains("statement pooling") == true, "round \(round): \(String(describing: refused))")
                #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-\(round - 1)"), "round \(round)")
                try await store.save(TestDatabase.login("access-\(round)"), for: Self.key)
            }
            #expect(try await store.keys() == [Self.key])
            #expect(try await TestDatabase.lockHolder(admin, store, Self.key) == nil)
        }
    }

    @Test("session pooling: 6 tasks of two instances count to 30 under the lock, never two inside at once")
    func excludesThroughSessionPooling() async throws {
        try await TestDatabase.withPooledStores(.session, count: 2) { stores, admin in
            try await Self.countUnderTheLock(stores)
            #expect(try await TestDatabase.lockHolder(admin, stores[0], Self.key) == nil)
        }
    }

    @Test("transaction pooling: 8 processes find the same login expired at once: 1 refresh, the same new token for all, nobody logged out")
    func eightInstancesThroughTransactionPooling() async throws {
        try await withTestProvider { provider in
            try await TestDatabase.withStore { store, _ in
                let before = try await PostgresFleetTests.injectExpiredLogin(provider, into: store)
                var environment = PostgresFleetTests.workerEnvironment(provider, store)
                environment["OIDC_TEST_DATABASE_URL"] = try TestDatabase.url(of: .transaction)
                let results = try await PostgresFleetTests.runRefreshWorkers(8, environment: environment)
                #expect(await provider.grantCount("refresh_token") == 1)
                let stored = try #require(try await store.load(PostgresFleetTests.key), "logged out")
                #expect(stored.tokens.refreshToken != before.tokens.refreshToken)
                #expect(results == Array(repeating: try PostgresFleetTests.fingerprint(stored.tokens.accessToken), count: 8), "\(results)")
            }
        }
    }

    @Test("transaction pooling: an instance killed while it holds the lock: PgBouncer closes its server session, which releases the lock; the others go on with 1 refresh")
    func killedHolderThroughTransactionPooling() async throws {
        try await withTestProvider { provider in
            try await TestDatabase.withStore { store, admin in
                _ = try await PostgresFleetTests.injectExpiredLogin(provider, into: store)
                var environment = PostgresFleetTests.workerEnvironment(provider, store)
                environment["OIDC_TEST_DATABASE_URL"] = try TestDatabase.url(of: .transaction)
                let holder = try WorkerProcess("hold", environment: environment)
                let line = await holder.nextLine()
                try #require(line == "locked", "\(line ?? "no output") \(holder.standardError)")
                holder.kill()
                #expect(await holder.exitStatus() == -SIGKILL)
                let results = try await PostgresFleetTests.runRefreshWorkers(3, environment: environment)
                #expect(await provider.grantCount("refresh_token") == 1)
                let stored = try #require(try await store.load(PostgresFleetTests.key), "logged out")
                #expect(results == Array(repeating: try PostgresFleetTests.fingerprint(stored.tokens.accessToken), count: 3), "\(results)")
                #expect(try await TestDatabase.lockHolder(admin, store, PostgresFleetTests.key) == nil)
            }
        }
    }

    /// Six tasks, three on each store, each adding 1 to a count kept in the login five times under the lock.
    static func countUnderTheLock(_ stores: [PostgresTokenStore]) async throws {
        let counter = LockCounter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                let mine = stores[index % stores.count]
                group.addTask {
                    for _ in 0..<5 {
                        try await mine.withLock(Self.key) {
                            counter.enter()
                            defer { counter.leave() }
                            let count = try #require(Int(try await mine.load(Self.key)?.attributes["count"] ?? "0"))
                            try await Task.sleep(for: .milliseconds(2))
                            try await mine.save(TestDatabase.login(attributes: ["count": String(count + 1)]), for: Self.key)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(counter.snapshot.maximum == 1 && counter.snapshot.entries == 30, "\(counter.snapshot)")
        #expect(try await stores[0].load(Self.key)?.attributes["count"] == "30")
    }

    /// Runs `body` while a client of `pooler` (a pool of two server sessions) holds the server
    /// session `pid` inside a transaction, and the other session is free; then releases every
    /// advisory lock of that session and gives it back.
    static func whileSession<T: Sendable>(_ pid: Int32, isTakenBy pooler: PostgresClient, _ body: () async throws -> T) async throws -> T {
        @Sendable func backendPID(_ connection: PostgresConnection) async throws -> Int32 {
            for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: TestDatabase.logger).decode(Int32.self) { return pid }
            throw OIDCError(.storageFailure, "no pid")
        }
        return try await pooler.withConnection { first in
            try await first.query("BEGIN", logger: TestDatabase.logger).drain()
            if try await backendPID(first) == pid {
                let result = try await body()
                try await first.query("SELECT pg_advisory_unlock_all()", logger: TestDatabase.logger).drain()
                try await first.query("ROLLBACK", logger: TestDatabase.logger).drain()
                return result
            }
            // The first transaction got the other session: a second one gets the lock's, then the first ends.
            return try await pooler.withConnection { second in
                try await second.query("BEGIN", logger: TestDatabase.logger).drain()
                try #require(try await backendPID(second) == pid)
                try await first.query("ROLLBACK", logger: TestDatabase.logger).drain()
                let result = try await body()
                try await second.query("SELECT pg_advisory_unlock_all()", logger: TestDatabase.logger).drain()
                try await second.query("ROLLBACK", logger: TestDatabase.logger).drain()
                return result
            }
        }
    }
}
