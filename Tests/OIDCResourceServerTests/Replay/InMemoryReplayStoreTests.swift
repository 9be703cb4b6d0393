import Foundation
import OIDCResourceServer
import Synchronization
import Testing

@Suite("Replay store in memory")
struct InMemoryReplayStoreTests {
    final class TestClock: Sendable {
        let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func now() -> Date { date.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { date.withLock { $0 += seconds } }
    }

    @Test("the first claim succeeds and the second is a replay")
    func replayRefused() async throws {
        let clock = TestClock()
        let store = InMemoryReplayStore(now: { clock.now() })
        let until = clock.now().addingTimeInterval(60)
        #expect(try await store.claim("jkt:abc", until: until))
        #expect(try await store.claim("jkt:abc", until: until) == false)
        #expect(try await store.claim("jkt:abd", until: until))
    }

    @Test("an identifier is forgotten after its expiry")
    func expiryForgets() async throws {
        let clock = TestClock()
        let store = InMemoryReplayStore(now: { clock.now() })
        #expect(try await store.claim("a", until: clock.now().addingTimeInterval(10)))
        clock.advance(9)
        #expect(try await store.claim("a", until: clock.now().addingTimeInterval(10)) == false)
        clock.advance(11)
        #expect(try await store.claim("a", until: clock.now().addingTimeInterval(10)))
    }

    @Test("a full store refuses new claims until identifiers expire, and never forgets a live one")
    func boundedCapacity() async throws {
        let clock = TestClock()
        let store = InMemoryReplayStore(capacity: 3, now: { clock.now() })
        for id in ["a", "b", "c"] { #expect(try await store.claim(id, until: clock.now().addingTimeInterval(30))) }
        await #expect(throws: ReplayStoreError(.full(capacity: 3))) {
            try await store.claim("d", until: clock.now().addingTimeInterval(30))
        }
        #expect(try await store.claim("a", until: clock.now().addingTimeInterval(30)) == false)
        clock.advance(31)
        #expect(try await store.claim("d", until: clock.now().addingTimeInterval(30)))
        #expect(store.count == 1)
    }

    @Test("a released identifier can be claimed again; the others stay claimed")
    func release() async throws {
        let store = InMemoryReplayStore()
        let until = Date().addingTimeInterval(60)
        #expect(try await store.claim("a", until: until))
        #expect(try await store.claim("b", until: until))
        try await store.release("a")
        #expect(try await store.claim("a", until: until))
        #expect(try await store.claim("b", until: until) == false)
    }

    @Test("concurrent claims of one identifier: exactly one wins")
    func concurrentClaims() async throws {
        let store = InMemoryReplayStore()
        let until = Date().addingTimeInterval(60)
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 { group.addTask { try await store.claim("same", until: until) } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
    }
}
