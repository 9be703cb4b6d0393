import Foundation
import OIDC
import OIDCPostgres
import OIDCTestSupport
import PostgresNIO
import Testing

@Suite("PostgresTokenStore: logins in PostgreSQL, sealed, one lock across instances", TestDatabase.available, .timeLimit(.scaledMinutes(3)))
struct PostgresTokenStoreTests {
    static let key = TokenStoreKey(service: "com.example.app", account: "user@example.com")

    @Test("migrate is idempotent; a saved login loads back; save replaces; delete forgets and tolerates absence; keys lists")
    func roundTrip() async throws {
        try await TestDatabase.withStore { store, _ in
            try await store.migrate()  // again: nothing happens
            #expect(try await store.load(Self.key) == nil)
            try await store.delete(Self.key)
            try await store.save(TestDatabase.login(), for: Self.key)
            #expect(try await store.load(Self.key) == TestDatabase.login())
            try await store.save(TestDatabase.login("access-2"), for: Self.key)
            #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-2"))
            let other = TokenStoreKey(service: "a'; DROP TABLE x; --", account: "ü e\u{301}")
            try await store.save(TestDatabase.login(), for: other)
            #expect(try await store.load(other) == TestDatabase.login())
            let withNUL = TokenStoreKey(service: "s", account: "a\u{0}b")
            let refused = try await #require(throws: OIDCError.self) { try await store.save(TestDatabase.login(), for: withNUL) }
            #expect(refused.code == .invalidArgument && refused.message.contains("NUL"))
            #expect(try await store.keys() == [other, Self.key])
            try await store.delete(Self.key)
            #expect(try await store.load(Self.key) == nil)
            try await store.delete(Self.key)
            // Through the protocol, as a session uses it.
            let any: any TokenStore = store
            try await any.save(TestDatabase.login("access-3"), for: Self.key)
            #expect(try await any.load(Self.key)?.tokens.accessToken == Secret("access-3"))
        }
    }

    @Test("migrate from many instances at once creates the table once, without an error")
    func concurrentMigrate() async throws {
        try await TestDatabase.withClient { client in
            let table = TestDatabase.newTable()
            let store = try PostgresTokenStore(client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: table)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 { group.addTask { try await store.migrate() } }
                try await group.waitForAll()
            }
            try await store.save(TestDatabase.login(), for: Self.key)
            #expect(try await store.load(Self.key) == TestDatabase.login())
            try await client.query("DROP TABLE \(unescaped: table)").drain()
        }
    }

    @Test("a table name that is not a plain identifier is refused; a missing table says to run migrate()")
    func tableNames() async throws {
        try await TestDatabase.withClient { client in
            let encryption = try TokenEncryption(current: TestDatabase.key1)
            for bad in ["", "Logins", "a-b", "x; DROP TABLE y", "a.b.c", "1abc", String(repeating: "a", count: 64)] {
                let error = try #require(throws: OIDCError.self, "\(bad)") { try PostgresTokenStore(client: client, encryption: encryption, table: bad) }
                #expect(error.code == .invalidArgument)
            }
            _ = try PostgresTokenStore(client: client, encryption: encryption, table: "public.oidc_logins_2")
            let store = try PostgresTokenStore(client: client, encryption: encryption, table: TestDatabase.newTable())
            let error = try await #require(throws: OIDCError.self) { try await store.load(Self.key) }
            #expect(error.code == .storageFailure && error.message.contains("migrate()"), "\(error)")
        }
    }

    // MARK: Encryption at rest

    @Test("rows hold sealed records and the key id, never a token in clear")
    func sealedAtRest() async throws {
        try await TestDatabase.withStore { store, client in
            try await store.save(TestDatabase.login("access-in-clear", refresh: "refresh-in-clear"), for: Self.key)
            let row = try #require(try await TestDatabase.rawRecord(client, store, Self.key))
            #expect(row.keyID == "key-1")
            let text = String(decoding: row.record, as: UTF8.self)
            for secret in ["access-in-clear", "refresh-in-clear", "id-1", "user-1"] {
                #expect(!text.contains(secret), "\(secret) is readable in the row")
            }
        }
    }

    @Test("a record sealed with key 1 reads after rotation to key 2 and is re-sealed with key 2 at its next save")
    func keyRotation() async throws {
        try await TestDatabase.withStore { store, client in
            try await store.save(TestDatabase.login(), for: Self.key)
            let rotated = try PostgresTokenStore(
                client: client, encryption: TokenEncryption(current: TestDatabase.key2, previous: [TestDatabase.key1]), table: store.table)
            #expect(try await rotated.load(Self.key) == TestDatabase.login())
            #expect(try await TestDatabase.rawRecord(client, store, Self.key)?.keyID == "key-1")
            try await rotated.save(TestDatabase.login("access-2"), for: Self.key)
            #expect(try await TestDatabase.rawRecord(client, store, Self.key)?.keyID == "key-2")
            #expect(try await rotated.load(Self.key)?.tokens.accessToken == Secret("access-2"))

            // An instance that only has key 1 cannot read it, and says which key it lacks.
            let error = try await #require(throws: OIDCError.self) { try await store.load(Self.key) }
            #expect(error.code == .storageFailure && error.message.contains("key-2") && error.message.contains(store.table), "\(error)")
        }
    }

    @Test("a record with a flipped byte, or moved to another login's row, is refused and names the row")
    func tamperedRecords() async throws {
        try await TestDatabase.withStore { store, client in
            try await store.save(TestDatabase.login(), for: Self.key)
            let length = try #require(try await TestDatabase.rawRecord(client, store, Self.key)).record.count
            // Every 7th byte position, and the last: each flip alone must be refused.
            for position in Array(stride(from: 0, to: length, by: 7)) + [length - 1] {
                try await client.query(
                    "UPDATE \(unescaped: store.table) SET record = set_byte(record, \(Int32(position)), get_byte(record, \(Int32(position))) # 1)").drain()
                let error = try await #require(throws: OIDCError.self, "byte \(position)") { try await store.load(Self.key) }
                #expect(error.code == .corruptStore || error.code == .storageFailure, "byte \(position): \(error)")
                #expect(error.message.contains(store.table), "byte \(position): \(error)")
                try await client.query(
                    "UPDATE \(unescaped: store.table) SET record = set_byte(record, \(Int32(position)), get_byte(record, \(Int32(position))) # 1)").drain()
            }
            #expect(try await store.load(Self.key) == TestDatabase.login())

            // The intact record of one login copied into another login's row does not open there.
            let victim = TokenStoreKey(service: Self.key.service, account: "victim")
            try await client.query(
                """
                INSERT INTO \(unescaped: store.table) (service, account, key_id, record)
                SELECT service, \(victim.account), key_id, record FROM \(unescaped: store.table) WHERE account = \(Self.key.account)
                """).drain()
            let error = try await #require(throws: OIDCError.self) { try await store.load(victim) }
            #expect(error.code == .corruptStore && error.message.contains("victim"), "\(error)")
        }
    }

    // MARK: Locking

    @Test("withLock excludes tasks of one instance and of another instance with its own pool")
    func lockExcludes() async throws {
        try await TestDatabase.withStore { store, _ in
            try await TestDatabase.withClient { otherClient in
                let other = try PostgresTokenStore(client: otherClient, encryption: store.encryption, table: store.table)
                let counter = LockCounter()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<6 {
                        let mine = index.isMultiple(of: 2) ? store : other
                        group.addTask {
                            for _ in 0..<5 {
                                try await mine.withLock(Self.key) {
                                    counter.enter()
                                    let count = try #require(Int(try await mine.load(Self.key)?.attributes["count"] ?? "0"))
                                    try await Task.sleep(for: .milliseconds(2))
                                    try await mine.save(TestDatabase.login(attributes: ["count": String(count + 1)]), for: Self.key)
                                    counter.leave()
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let final = counter.snapshot
                #expect(final.maximum == 1 && final.entries == 30, "\(final)")
                #expect(try await store.load(Self.key)?.attributes["count"] == "30")
            }
        }
    }

    @Test("a lock held too long gives a storageFailure; a throwing body releases it; other logins are not blocked")
    func lockTimeoutAndRelease() async throws {
        try await TestDatabase.withStore { store, client in
            let impatient = try PostgresTokenStore(
                client: client, encryption: store.encryption, table: store.table, lockTimeout: .milliseconds(300))
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await store.withLock(Self.key) {
                    holding.yield()
                    for await _ in release { break }
                }
            }
            for await _ in held { break }
            let start = ContinuousClock.now
            let error = try await #require(throws: OIDCError.self) { try await impatient.withLock(Self.key) {} }
            #expect(error.code == .storageFailure && error.message.contains("held"), "\(error)")
            #expect(ContinuousClock.now - start >= .milliseconds(300))
            // Another login's lock is free meanwhile.
            #expect(try await impatient.withLock(TokenStoreKey(service: "s", account: "other")) { 7 } == 7)
            releasing.yield()
            try await holder.value

            struct Boom: Error {}
            await #expect(throws: Boom.self) { try await store.withLock(Self.key) { throw Boom() } }
            #expect(try await impatient.withLock(Self.key) { 42 } == 42)
        }
    }

    @Test("a pool of one connection is enough: the body's load, save and delete run on the lock's own connection")
    func lockOnOneConnection() async throws {
        try await TestDatabase.withClient(maximumConnections: 1) { client in
            let store = try PostgresTokenStore(
                client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: TestDatabase.newTable(),
                operationTimeout: .scaled(.seconds(15)))
            try await store.migrate()
            // Each would wait for a second connection, and time out, if it did not use the lock's.
            let loaded = try await store.withLock(Self.key) {
                try await store.save(TestDatabase.login("access-a"), for: Self.key)
                let first = try await store.load(Self.key)
                try await store.delete(Self.key)
                #expect(try await store.load(Self.key) == nil)
                try await store.save(TestDatabase.login("access-b"), for: Self.key)
                return first
            }
            #expect(loaded?.tokens.accessToken == Secret("access-a"))
            #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-b"))
            // The lock was released: another withLock on the one connection takes it at once.
            #expect(try await store.withLock(Self.key) { 5 } == 5)
            try await client.query("DROP TABLE \(unescaped: store.table)").drain()
        }
    }

    @Test("a pool whose only connection holds another login's lock: withLock fails after the time limit, saying so, instead of waiting for ever")
    func poolExhausted() async throws {
        try await TestDatabase.withClient(maximumConnections: 1) { client in
            let store = try PostgresTokenStore(client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: TestDatabase.newTable())
            let impatient = try PostgresTokenStore(
                client: client, encryption: store.encryption, table: store.table, operationTimeout: .milliseconds(500))
            try await store.migrate()
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await store.withLock(TokenStoreKey(service: "s", account: "busy")) {
                    holding.yield()
                    for await _ in release { break }
                }
            }
            for await _ in held { break }
            let start = ContinuousClock.now
            let error = try await #require(throws: OIDCError.self) { try await impatient.withLock(Self.key) { 1 } }
            #expect(error.code == .storageFailure && error.message.contains("maximumConnections"), "\(error)")
            #expect(ContinuousClock.now - start < .scaled(.seconds(5)))
            releasing.yield()
            try await holder.value
            // The abandoned request left nothing behind: the one connection serves the next lock.
            #expect(try await store.withLock(Self.key) { 2 } == 2)
            try await client.query("DROP TABLE \(unescaped: store.table)").drain()
        }
    }

    @Test("the lock is lost while another instance waits: that instance takes it, and the first one's save and load are refused, not done without the lock")
    func lostLockFencesWrites() async throws {
        let log = LogRecorder()
        try await TestDatabase.withStore { plainStore, admin in
            let store = try PostgresTokenStore(client: plainStore.client, encryption: plainStore.encryption, table: plainStore.table, logger: log.logger("oidc.store"))
            try await store.save(TestDatabase.login("access-old"), for: Self.key)
            try await TestDatabase.withClient { otherClient in
                let other = try PostgresTokenStore(client: otherClient, encryption: store.encryption, table: store.table)
                let (otherHolds, otherHolding) = AsyncStream.makeStream(of: Void.self)
                let (otherMayEnd, otherEnding) = AsyncStream.makeStream(of: Void.self)
                let first = try await store.withLock(Self.key) { () async throws -> OIDCError? in
                    let waiter = Task {
                        try await other.withLock(Self.key) {
                            otherHolding.yield()
                            for await _ in otherMayEnd { break }
                            try await other.save(TestDatabase.login("access-other"), for: Self.key)
                        }
                    }
                    try #require(try await TestDatabase.waitForLockWaiter(admin, store, Self.key), "the other instance never waited")
                    try #require(try await TestDatabase.terminateLockHolder(admin, store, Self.key))
                    for await _ in otherHolds { break }  // the other instance has the lock now
                    let refused = await #expect(throws: OIDCError.self) {
                        try await store.save(TestDatabase.login("access-stale"), for: Self.key)
                    }
                    await #expect(throws: OIDCError.self) { try await store.load(Self.key) }
                    otherEnding.yield()
                    try await waiter.value
                    return refused
                }
                #expect(first?.code == .storageFailure && first?.message.contains("lock") == true, "\(String(describing: first))")
                #expect(first.map { !$0.message.contains("access-stale") } ?? true)
                #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-other"))
                // The first instance's pool recovers, and its lock works again.
                try await store.withLock(Self.key) { try await store.save(TestDatabase.login("access-new"), for: Self.key) }
                #expect(try await other.load(Self.key)?.tokens.accessToken == Secret("access-new"))
            }
        }
        // The store said what happened, at warning, and logged no token (nor any record).
        let lines = log.all
        #expect(lines.contains { $0.level == .warning && $0.text.contains("lock") && $0.text.contains("refused") }, "\(lines.map(\.text))")
        #expect(lines.contains { $0.text.hasPrefix("lock taken") && $0.text.contains("account=user@example.com") })
        #expect(lines.contains { $0.text.hasPrefix("login saved") && $0.text.contains("key_id=key-1") })
        for line in lines { #expect(!line.text.contains("access-") && !line.text.contains("refresh-1") && !line.text.contains("id-1"), "\(line.text)") }
    }

    @Test("a key in NFD names the same row and lock as in NFC; table names that are SQL keywords work")
    func canonicalKeys() async throws {
        let composed = TokenStoreKey(service: "caf\u{E9}", account: "Zo\u{EB}")
        let decomposed = TokenStoreKey(service: "cafe\u{301}", account: "Zoe\u{308}")
        #expect(PostgresTokenStore.advisoryLockKey(table: "t", for: composed) == PostgresTokenStore.advisoryLockKey(table: "t", for: decomposed))
        try await TestDatabase.withClient { client in
            let store = try PostgresTokenStore(client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: "user")
            try await client.query("DROP TABLE IF EXISTS \"user\"").drain()
            try await store.migrate()
            try await store.save(TestDatabase.login("access-nfd"), for: decomposed)
            #expect(try await store.load(composed)?.tokens.accessToken == Secret("access-nfd"))
            #expect(try await store.keys().count == 1)
            try await store.delete(composed)
            #expect(try await store.keys().isEmpty)
            try await client.query("DROP TABLE \"user\"").drain()
        }
    }

    @Test("a task cancelled while it waits for the lock, or while its body runs, leaves no lock behind in the pool")
    func cancellationReleasesTheLock() async throws {
        try await TestDatabase.withStore { store, admin in
            let check = try PostgresTokenStore(client: admin, encryption: store.encryption, table: store.table, lockTimeout: .scaled(.seconds(2)))
            // Cancelled while waiting: the pending lock statement must not be granted later to a pooled connection.
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await check.withLock(Self.key) {
                    holding.yield()
                    for await _ in release { break }
                }
            }
            for await _ in held { break }
            let waiter = Task { try await store.withLock(Self.key) { 1 } }
            try #require(try await TestDatabase.waitForLockWaiter(admin, store, Self.key))
            waiter.cancel()
            let cancelled = await waiter.result
            #expect(throws: OIDCError.self) { try cancelled.get() }
            releasing.yield()
            try await holder.value
            // Both the pool's connections and the server are free of that lock: another pool takes it at once.
            #expect(try await check.withLock(Self.key) { 2 } == 2)

            // Cancelled inside the body: the unlock is still sent.
            let (entered, entering) = AsyncStream.makeStream(of: Void.self)
            let inside = Task {
                try await store.withLock(Self.key) {
                    entering.yield()
                    try await Task.sleep(for: .seconds(60))
                }
            }
            for await _ in entered { break }
            inside.cancel()
            _ = await inside.result
            #expect(try await check.withLock(Self.key) { 3 } == 3)
            // The store's own pool is still usable.
            #expect(try await store.withLock(Self.key) { 4 } == 4)
        }
    }

    @Test("a task the body started and left behind cannot write once the lock is released")
    func leftoverTaskRefused() async throws {
        try await TestDatabase.withStore { store, _ in
            try await store.save(TestDatabase.login("access-kept"), for: Self.key)
            let (released, releasing) = AsyncStream.makeStream(of: Void.self)
            let leftover = try await store.withLock(Self.key) {
                Task {
                    for await _ in released { break }
                    try await store.save(TestDatabase.login("access-late"), for: Self.key)
                }
            }
            releasing.yield()
            let error = await #expect(throws: OIDCError.self) { try await leftover.value }
            #expect(error?.code == .storageFailure && error?.message.contains("after the lock was released") == true, "\(String(describing: error))")
            #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-kept"))
        }
    }

    @Test("the lock key is stable: a fixed value for a fixed table, service and account")
    func stableLockKey() async throws {
        // Every instance, on any machine and version, must compute the same key, or the lock excludes nothing.
        let keys = [
            PostgresTokenStore.advisoryLockKey(table: "oidc_logins", for: TokenStoreKey(service: "oidc", account: "default")),
            PostgresTokenStore.advisoryLockKey(table: "oidc_logins", for: TokenStoreKey(service: "oidc", account: "other")),
            PostgresTokenStore.advisoryLockKey(table: "other_table", for: TokenStoreKey(service: "oidc", account: "default")),
        ]
        #expect(Set(keys).count == 3)
        // SHA-256 of "oidc-token-store\0oidc_logins\0oidc\0default\0", first 8 bytes, big-endian, signed
        // (computed with Python's hashlib).
        #expect(keys[0] == -7_764_138_500_447_428_705)
        #expect(keys[0] == PostgresTokenStore.advisoryLockKey(table: "oidc_logins", for: TokenStoreKey(service: "oidc", account: "default")))
    }
}
