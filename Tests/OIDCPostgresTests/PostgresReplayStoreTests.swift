import Foundation
import Logging
import OIDC
import OIDCPostgres
import OIDCResourceServer
import OIDCTestSupport
import PostgresNIO
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A clock a test moves by hand.
final class ManualClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("PostgresReplayStore", TestDatabase.available)
struct PostgresReplayStoreTests {
    /// Runs `body` with a migrated replay store in a new table on the clock `clock`, dropped afterwards.
    static func withReplayStore<T: Sendable>(
        clock: ManualClock = ManualClock(), purgeLimit: Int = 1000,
        _ body: @Sendable (PostgresReplayStore, PostgresClient) async throws -> T
    ) async throws -> T {
        try await TestDatabase.withClient { client throws in
            let store = try PostgresReplayStore(
                client: client, table: TestDatabase.newTable(), operationTimeout: .scaled(.seconds(5)), purgeLimit: purgeLimit,
                purgeInterval: .seconds(3600), now: { clock.now })
            try await store.migrate()
            try await store.migrate()  // idempotent
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

    static func rowCount(_ client: PostgresClient, _ store: PostgresReplayStore) async throws -> Int64 {
        for try await count in try await client.query("SELECT count(*) FROM \(unescaped: store.table)").decode(Int64.self) { return count }
        return -1
    }

    @Test("a jti is claimed once; its replay is refused; another identifier is its own")
    func claimsOnce() async throws {
        let clock = ManualClock()
        try await Self.withReplayStore(clock: clock) { store, _ throws in
            let expiry = clock.now.addingTimeInterval(300)
            #expect(try await store.claim("jkt-1 jti-1", until: expiry))
            #expect(try await store.claim("jkt-1 jti-1", until: expiry) == false)
            #expect(try await store.claim("jkt-2 jti-1", until: expiry))
        }
    }

    @Test("a released identifier can be claimed again (work that failed after its claim); the others stay claimed")
    func release() async throws {
        let clock = ManualClock()
        try await Self.withReplayStore(clock: clock) { store, _ throws in
            let expiry = clock.now.addingTimeInterval(300)
            #expect(try await store.claim("a", until: expiry))
            #expect(try await store.claim("b", until: expiry))
            try await store.release("a")
            #expect(try await store.claim("a", until: expiry))
            #expect(try await store.claim("b", until: expiry) == false)
        }
    }

    @Test("identifiers are stored hashed to 32 bytes, whatever their length, never in clear")
    func hashesIdentifiers() async throws {
        let clock = ManualClock()
        try await Self.withReplayStore(clock: clock) { store, client throws in
            let long = String(repeating: "é", count: 20_000) + "\u{0}tail"
            #expect(try await store.claim(long, until: clock.now.addingTimeInterval(60)))
            #expect(try await store.claim(long, until: clock.now.addingTimeInterval(60)) == false)
            #expect(try await store.claim("short-jti", until: clock.now.addingTimeInterval(60)))
            let rows = try await client.query("SELECT id FROM \(unescaped: store.table)")
            var lengths: [Int] = []
            for try await id in rows.decode(ByteBuffer.self) {
                lengths.append(id.readableBytes)
                #expect(!String(decoding: id.readableBytesView, as: UTF8.self).contains("short-jti"))
            }
            #expect(lengths == [32, 32])
        }
    }

    @Test("an expired record no longer refuses its identifier; a live one does until its expiry")
    func expiry() async throws {
        let clock = ManualClock()
        try await Self.withReplayStore(clock: clock) { store, _ throws in
            #expect(try await store.claim("jti-e", until: clock.now.addingTimeInterval(120)))
            clock.advance(by: 119)
            #expect(try await store.claim("jti-e", until: clock.now.addingTimeInterval(120)) == false)
            clock.advance(by: 1)
            // Expired: claimed again, with the new expiry.
            #expect(try await store.claim("jti-e", until: clock.now.addingTimeInterval(120)))
            clock.advance(by: 60)
            #expect(try await store.claim("jti-e", until: clock.now.addingTimeInterval(120)) == false)
        }
    }

    @Test("a purge deletes only expired rows, at most purgeLimit of them at a time")
    func purgeIsBounded() async throws {
        let clock = ManualClock()
        try await Self.withReplayStore(clock: clock, purgeLimit: 3) { store, client throws in
            for number in 0..<5 { #expect(try await store.claim("old-\(number)", until: clock.now.addingTimeInterval(10))) }
            #expect(try await store.claim("live", until: clock.now.addingTimeInterval(1000)))
            clock.advance(by: 11 + 300)  // past the default purge margin
            #expect(try await store.purgeExpired() == 3)
            #expect(try await store.purgeExpired() == 2)
            #expect(try await store.purgeExpired() == 0)
            #expect(try await Self.rowCount(client, store) == 1)
            #expect(try await store.claim("live", until: clock.now.addingTimeInterval(1000)) == false)
        }
    }

    @Test("claims purge expired rows by themselves, at most once per interval")
    func claimsPurge() async throws {
        let clock = ManualClock()
        try await TestDatabase.withClient { client throws in
            let store = try PostgresReplayStore(
                client: client, table: TestDatabase.newTable(), operationTimeout: .scaled(.seconds(5)), purgeInterval: .zero, now: { clock.now })
            try await store.migrate()
            for number in 0..<4 { _ = try await store.claim("gone-\(number)", until: clock.now.addingTimeInterval(5)) }
            clock.advance(by: 6 + 300)  // past the default purge margin
            #expect(try await store.claim("new", until: clock.now.addingTimeInterval(5)))
            #expect(try await Self.rowCount(client, store) == 1)
            try await client.query("DROP TABLE \(unescaped: store.table)").drain()
        }
    }

    @Test("sixteen tasks on two pools claim one jti at once: exactly one wins")
    func concurrentClaims() async throws {
        let clock = ManualClock()
        try await Self.withReplayStore(clock: clock) { first, _ throws in
            try await TestDatabase.withClient { otherPool throws in
                let second = try PostgresReplayStore(client: otherPool, table: first.table, operationTimeout: .scaled(.seconds(5)), now: { clock.now })
                for round in 0..<5 {
                    let identifier = "race-\(round)"
                    let expiry = clock.now.addingTimeInterval(60)
                    let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                        for task in 0..<16 {
                            let store = task.isMultiple(of: 2) ? first : second
                            group.addTask { try await store.claim(identifier, until: expiry) }
                        }
                        var wins = 0
                        for try await won in group where won { wins += 1 }
                        return wins
                    }
                    #expect(wins == 1, "round \(round): \(wins) winners")
                }
            }
        }
    }

    @Test("a jti claimed in this process is refused in another process, and the other way round")
    func anotherInstance() async throws {
        try await TestDatabase.withClient { client throws in
            // Both processes on the system's clock, as a fleet is.
            let store = try PostgresReplayStore(client: client, table: TestDatabase.newTable(), operationTimeout: .scaled(.seconds(5)))
            try await store.migrate()
            let worker = try WorkerProcess("claim", environment: ["OIDC_TABLE": store.table])
            let ready = await worker.nextLine()
            try #require(ready == "ready", "\(ready ?? "no output") \(worker.standardError)")
            let expiry = Date().addingTimeInterval(3600)
            #expect(try await store.claim("proof-here", until: expiry))
            worker.send("proof-here \(expiry.timeIntervalSince1970)")
            let first = await worker.nextLine()
            #expect(first == "replayed", "\(first ?? "no output") \(worker.standardError)")
            worker.send("proof-there \(expiry.timeIntervalSince1970)")
            #expect(await worker.nextLine() == "claimed")
            #expect(try await store.claim("proof-there", until: expiry) == false)
            worker.kill()
            _ = await worker.exitStatus()
            try await client.query("DROP TABLE \(unescaped: store.table)").drain()
        }
    }

    @Test("failures are ReplayStoreError.unavailable, naming the table and never the identifier")
    func failures() async throws {
        try await TestDatabase.withClient { client throws in
            let missing = try PostgresReplayStore(client: client, table: TestDatabase.newTable(), operationTimeout: .scaled(.seconds(5)))
            let error = await #expect(throws: ReplayStoreError.self) { try await missing.claim("secret-jti-value", until: Date()) }
            guard case .unavailable(let why)? = error?.reason else { Issue.record("not unavailable: \(String(describing: error))"); return }
            #expect(why.contains(missing.table) && why.contains("migrate()"), "\(why)")
            #expect(!why.contains("secret-jti-value") && !(error?.description.contains("secret-jti-value") ?? true))
        }
        // Nobody listening: the pool cannot connect, and the call fails within its time limit.
        let port = try freePort()
        try await TestDatabase.withClient(url: "postgres://oidc:password@127.0.0.1:\(port)/none?sslmode=disable") { client throws in
            let unreachable = try PostgresReplayStore(client: client, operationTimeout: .seconds(2))
            let error = await #expect(throws: ReplayStoreError.self) { try await unreachable.claim("secret-jti-value", until: Date()) }
            guard case .unavailable(let why)? = error?.reason else { Issue.record("not unavailable: \(String(describing: error))"); return }
            #expect(!why.contains("secret-jti-value") && !why.contains("password"), "\(why)")
        }
    }

    @Test("a table name that is not an SQL identifier is refused")
    func tableNames() async throws {
        try await TestDatabase.withClient { client throws in
            #expect(throws: OIDCError.self) { _ = try PostgresReplayStore(client: client, table: "replay; DROP TABLE x") }
            #expect(throws: OIDCError.self) { _ = try PostgresReplayStore(client: client, table: "Replay") }
            #expect(throws: OIDCError.self) { _ = try PostgresReplayStore(client: client, purgeLimit: 0) }
            _ = try PostgresReplayStore(client: client, table: "auth.oidc_replay")
        }
    }
}
