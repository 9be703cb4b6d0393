import Foundation
import OIDC
import OIDCPostgres
import PostgresNIO
import Testing

/// Every statement under the lock checks, in the statement itself, that its server session is the
/// one that took the lock and still holds it: the fence does not rest on the connection alone.
@Suite("PostgresTokenStore: statements under the lock carry their own fence", TestDatabase.available, .timeLimit(.minutes(2)))
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
}
