import Foundation
import OIDC
import OIDCPostgres
import OIDCTestSupport
import PostgresNIO
import Testing

/// Every statement under the lock checks, in the statement itself, that its server session is the
/// one that took the lock and still holds it: the fence does not rest on the connection alone.
@Suite("PostgresTokenStore: statements under the lock carry their own fence", TestDatabase.available, .timeLimit(.scaledMinutes(2)))
struct PostgresLockFenceTests {
    static let key = TokenStoreKey(service: "com.example.backend", account: "fenced")

    @Test("a lock released on its server session without closing it (as DISCARD ALL or pg_advisory_unlock_all do): the save, load and delete under it are refused by the statements themselves, and nothing is written")
    func sessionLosesTheLock() async throws {
        try await TestDatabase.withStore { store, admin in
            try await store.save(TestDatabase.login("access-before"), for: Self.key)
            let refused = try await store.withLock(Self.key) { () async throws -> OIDCError? in
                let lockConnection = try #require(store.lockConnectionForTesting(Self.key))
                try await lockConnection.query("SELECT pg_advisory_unlock_all()", logger: TestDatabase.logger).drain()
                #expect(try await TestDatabase.lockHolder(admin, store, Self.key) == nil)
                let refused = await #expect(throws: OIDCError.self) {
                    try await store.save(TestDatabase.login("access-unlocked"), for: Self.key)
                }
                await #expect(throws: OIDCError.self) { try await store.load(Self.key) }
                await #expect(throws: OIDCError.self) { try await store.delete(Self.key) }
                return refused
            }
            #expect(
                refused?.code == .storageFailure && refused?.message.contains("no longer holds the lock") == true
                    && !(refused?.message.contains("access-") ?? false), "\(String(describing: refused))")
            #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-before"))
            #expect(try await store.withLock(Self.key) { 4 } == 4)
            #expect(try await TestDatabase.lockHolder(admin, store, Self.key) == nil)
        }
    }

    @Test("a pool of one connection whose lock session is ended (pg_terminate_backend) during the body, 5 times: the closed connection goes back to the pool only once the pool knows, and the load after each lock gets a live connection within a 5 s operationTimeout (scaled)")
    func terminatedLockSessionLeavesNoDeadConnection() async throws {
        try await TestDatabase.withStore { base, admin in
            try await base.save(TestDatabase.login("access-kept"), for: Self.key)
            try await TestDatabase.withClient(maximumConnections: 1) { client in
                let store = try PostgresTokenStore(client: client, encryption: base.encryption, table: base.table, operationTimeout: .scaled(.seconds(5)))
                for round in 1...5 {
                    let lost = try await store.withLock(Self.key) { () async throws -> OIDCError? in
                        try #require(try await TestDatabase.terminateLockHolder(admin, store, Self.key), "round \(round)")
                        // The lock's connection is gone: the load under the lock is refused.
                        return await #expect(throws: OIDCError.self) { try await store.load(Self.key) }
                    }
                    #expect(lost?.code == .storageFailure && lost?.message.contains("lost") == true, "round \(round): \(String(describing: lost))")
                    #expect(try await store.load(Self.key)?.tokens.accessToken == Secret("access-kept"), "round \(round)")
                }
                #expect(try await store.withLock(Self.key) { 6 } == 6)
            }
            #expect(try await TestDatabase.lockHolder(admin, base, Self.key) == nil)
        }
    }
}
