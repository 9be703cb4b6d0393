import Foundation
import OIDC
import OIDCPostgres
import OIDCTesting
import OIDCTestSupport
import Synchronization
import Testing

/// OIDCTesting's `TokenStoreConformance` against PostgreSQL: two instances, each with its own pool.
@Suite("PostgresTokenStore conformance", TestDatabase.available, .timeLimit(.scaledMinutes(3)))
struct PostgresConformanceTests {
    @Test("PostgresTokenStore keeps every promise of TokenStore, across two instances with their own pools")
    func conforms() async throws {
        try await TestDatabase.withStore { store, _ in
            try await TestDatabase.withClient { otherClient in
                let other = try PostgresTokenStore(client: otherClient, encryption: store.encryption, table: store.table)
                let turn = Turn()
                try await TokenStoreConformance.run { turn.next() ? store : other }
            }
        }
    }
}

/// Alternates: true, false, true, …
private final class Turn: Sendable {
    private let count = Mutex(0)
    func next() -> Bool { count.withLock { $0 += 1; return $0 % 2 == 1 } }
}
