import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// OIDCTesting's `TokenStoreConformance` against the library's stores, and against broken stores
/// it must catch.
@Suite("TokenStore conformance", .timeLimit(.scaledMinutes(2)))
struct TokenStoreConformanceTests {
    @Test("FileKeychain keeps every promise of TokenStore, across FileKeychain values of one directory")
    func fileKeychain() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("TokenStoreConformance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("store")
        try await TokenStoreConformance.run { try FileKeychain(directory: directory) }
    }

    @Test("InMemoryTokenStore keeps every promise of TokenStore")
    func inMemory() async throws {
        let store = InMemoryTokenStore()
        try await TokenStoreConformance.run { store }
    }

    @Test("a store without a lock breaks the lock's promises, and only those; the failure names them")
    func unlockedStoreIsCaught() async throws {
        let store = UnlockedStore()
        let problems = await TokenStoreConformance.problems { store }
        #expect(problems.contains { $0.hasPrefix(TokenStoreConformance.Check.lockExcludes.rawValue) }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix(TokenStoreConformance.Check.lockHandsOver.rawValue) }, "\(problems)")
        #expect(problems.count == 2, "\(problems)")
        let failure = await #expect(throws: TokenStoreConformance.Failure.self) { try await TokenStoreConformance.run { store } }
        #expect(failure?.description.contains("withLock excludes") == true)
    }

    @Test("a store that loses a save or mixes keys is caught")
    func forgetfulStoreIsCaught() async throws {
        let store = OneSlotStore()
        let problems = await TokenStoreConformance.problems([.missingLogin, .roundTrip, .separateKeys]) { store }
        #expect(problems.count == 2, "\(problems)")
        #expect(!problems.contains { $0.hasPrefix(TokenStoreConformance.Check.missingLogin.rawValue) }, "\(problems)")
    }
}

/// A store whose lock runs the body at once: no exclusion.
private actor UnlockedStore: TokenStore {
    private var logins: [TokenStoreKey: StoredLogin] = [:]
    func load(_ key: TokenStoreKey) -> StoredLogin? { logins[key] }
    func save(_ login: StoredLogin, for key: TokenStoreKey) { logins[key] = login }
    func delete(_ key: TokenStoreKey) { logins[key] = nil }
    nonisolated func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        try await body()
    }
}

/// A store with one slot for every key, whose second save is lost.
private actor OneSlotStore: TokenStore {
    private var slot: StoredLogin?
    func load(_ key: TokenStoreKey) -> StoredLogin? { slot }
    func save(_ login: StoredLogin, for key: TokenStoreKey) { if slot == nil { slot = login } }
    func delete(_ key: TokenStoreKey) { slot = nil }
    func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T { try await body() }
}
