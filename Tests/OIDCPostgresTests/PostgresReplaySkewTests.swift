import Foundation
import OIDC
import OIDCPostgres
import OIDCResourceServer
import OIDCTesting
import PostgresNIO
import Synchronization
import OIDCTestSupport
import Testing

/// Security review 5, M1: instances sharing a `PostgresReplayStore` whose clocks disagree. A purge
/// by an instance whose clock runs ahead must not delete a record that another instance would
/// still need to refuse a replay.
@Suite("PostgresReplayStore across instances whose clocks disagree (security review 5, M1)", TestDatabase.available)
struct PostgresReplaySkewTests {
    /// Real time, which the test moves by hand, and each instance's clock as an offset from it.
    final class Timeline: Sendable {
        private let real = Mutex(Date())
        func clock(offset: TimeInterval) -> @Sendable () -> Date { { self.real.withLock { $0 }.addingTimeInterval(offset) } }
        func advance(_ seconds: TimeInterval) { real.withLock { $0 += seconds } }
    }

    /// A resource server instance that trusts `provider`, on `clock`, with `store`.
    static func instance(_ provider: TestProvider, clock: @escaping @Sendable () -> Date, store: PostgresReplayStore) throws -> ResourceServer {
        var configuration = ResourceServer.Configuration(
            resource: URL(string: "https://api.example/orders")!,
            issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: URL(string: provider.jwksURI)!, transport: NIOHTTPTransport.shared)]
        )
        configuration.now = clock
        configuration.replayStore = store
        return try ResourceServer(configuration)
    }

    /// Runs `body` with a new table's name (migrated by `body`), dropped afterwards.
    static func withTable<T: Sendable>(_ client: PostgresClient, _ body: (String) async throws -> T) async throws -> T {
        let table = TestDatabase.newTable()
        do {
            let result = try await body(table)
            try await client.query("DROP TABLE IF EXISTS \(unescaped: table)").drain()
            return result
        } catch {
            try? await client.query("DROP TABLE IF EXISTS \(unescaped: table)").drain()
            throw error
        }
    }

    static func isReplay(_ server: ResourceServer, _ request: ResourceRequest) async -> Bool {
        do {
            _ = try await server.verify(request)
            return false
        } catch {
            return error.rule == .replayedProof
        }
    }

    @Test(
        "a proof accepted at A (right clock); C (30 s ahead) purges at real T+41 and deletes nothing; A refuses the replay at T+45. With no margin (the purge before the fix) the same steps let the replay through",
        arguments: [Duration.seconds(300), .zero]
    )
    func skewedPurgeKeepsLiveRecord(_ margin: Duration) async throws {
        try await withTestProvider { provider in
            try await TestDatabase.withClient { client in try await Self.withTable(client) { table in
                let timeline = Timeline()
                let storeA = try PostgresReplayStore(client: client, table: table, operationTimeout: .scaled(.seconds(5)), purgeInterval: .seconds(3600), purgeMargin: margin, now: timeline.clock(offset: 0))
                let storeC = try PostgresReplayStore(client: client, table: table, operationTimeout: .scaled(.seconds(5)), purgeInterval: .seconds(3600), purgeMargin: margin, now: timeline.clock(offset: 30))
                try await storeA.migrate()
                let serverA = try Self.instance(provider, clock: timeline.clock(offset: 0), store: storeA)

                let key = try DPoPKey.generate()
                let token = try await provider.issueJWTAccessToken(audience: "https://api.example/orders", dpopKeyThumbprint: key.thumbprint)
                let proof = try key.proof(
                    method: "POST", url: URL(string: "https://api.example/orders/42")!, accessToken: Secret(token), now: timeline.clock(offset: 0)())
                let request = ResourceRequest(
                    method: "POST", url: URL(string: "https://api.example/orders/42")!,
                    headers: HTTPHeaders([("Authorization", "DPoP " + token), ("DPoP", proof)]))

                _ = try await serverA.verify(request)  // real T: the victim's request
                timeline.advance(10)
                #expect(await Self.isReplay(serverA, request))  // T+10: the attacker's replay
                timeline.advance(31)
                let purged = try await storeC.purgeExpired()  // T+41: C's clock says T+71
                timeline.advance(4)
                let replayRefused = await Self.isReplay(serverA, request)  // T+45: 45 s old, young enough for A
                if margin > .zero {
                    #expect(purged == 0 && replayRefused, "the margin keeps the record: the replay is refused")
                    // Once no instance within the margin can accept it, the record goes.
                    timeline.advance(70 + 300 - 45 - 30 + 1)
                    #expect(try await storeC.purgeExpired() == 1)
                } else {
                    #expect(purged == 1 && !replayRefused, "without a margin, the purge by the clock ahead let the replay through")
                }
            } }
        }
    }

    @Test("claims compare a record's expiry with the caller's clock: a record live for the caller refuses its claim though the store's own clock (200 s ahead, within the margin) finds it expired")
    func claimUsesCallersClock() async throws {
        try await TestDatabase.withClient { client in try await Self.withTable(client) { table in
            let timeline = Timeline()
            let store = try PostgresReplayStore(client: client, table: table, operationTimeout: .scaled(.seconds(5)), purgeInterval: .seconds(3600), now: timeline.clock(offset: 200))
            try await store.migrate()
            let now = timeline.clock(offset: 0)()
            #expect(try await store.claim("dpop:k:j", until: now.addingTimeInterval(70), now: now))
            #expect(try await store.claim("dpop:k:j", until: now.addingTimeInterval(70), now: now.addingTimeInterval(60)) == false)
            // By the store's own clock (200 s ahead) the record has expired: claim(_:until:) takes it.
            #expect(try await store.claim("dpop:k:j", until: now.addingTimeInterval(300)))
        } }
    }

    @Test("a purge margin that is negative is refused")
    func negativeMargin() async throws {
        try await TestDatabase.withClient { client in
            #expect(throws: OIDCError.self) { _ = try PostgresReplayStore(client: client, purgeMargin: .seconds(-1)) }
        }
    }
}
