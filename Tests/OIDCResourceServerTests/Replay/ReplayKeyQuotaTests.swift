import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

/// Security review 5, I3: one client (one proof key) cannot fill the in-memory replay store and so
/// make every DPoP request get 503.
@Suite("The in-memory replay store's per-key quota (security review 5, I3)")
struct ReplayKeyQuotaTests {
    @Test("a key at its quota gets 503 replay_quota_exceeded (no challenge), a replay of its proofs is still a replay; another key's proofs are taken; once its proofs expire the key is served again")
    func quotaPerKey() async throws {
        let store = InMemoryReplayStore(capacity: 100, perKeyLimit: 3)
        try await ResourceFixture.run({ $0.replayStore = store }) { fixture in
            let greedy = try DPoPKey.generate(), other = try DPoPKey.generate()
            let greedyToken = try await fixture.token(jkt: greedy.thumbprint), otherToken = try await fixture.token(jkt: other.thumbprint)
            let firstRequest = try fixture.dpop(greedyToken, key: greedy)
            _ = try await fixture.server.verify(firstRequest)
            for _ in 0..<2 { _ = try await fixture.server.verify(try fixture.dpop(greedyToken, key: greedy)) }
            #expect(store.count(forKey: greedy.thumbprint) == 3)

            let refusal = try await fixture.refusal(try fixture.dpop(greedyToken, key: greedy))
            #expect(refusal.rule == .replayQuotaExceeded && refusal.status == 503 && refusal.headers.fields.isEmpty, "\(refusal.rule)")
            #expect(refusal.message.contains("more proofs than this resource remembers for one key"), "\(refusal.message)")
            #expect(try await fixture.refusal(firstRequest).rule == .replayedProof)
            #expect(store.count(forKey: greedy.thumbprint) == 3)

            for _ in 0..<3 { _ = try await fixture.server.verify(try fixture.dpop(otherToken, key: other)) }
            #expect(store.count == 6)

            // 71 s on: the key's proofs have expired (they are kept within their margin until the
            // quota needs the room) and the key is served again; the replay of an old proof is
            // refused for its age.
            fixture.clock.advance(71)
            _ = try await fixture.server.verify(try fixture.dpop(greedyToken, key: greedy))
            #expect(store.count(forKey: greedy.thumbprint) == 1)
            #expect(try await fixture.refusal(firstRequest).rule == .invalidProof)
        }
    }

    @Test("the store: the quota counts a key's identifiers only (not logout tokens', not other keys'); a release frees a place; the error says what it is")
    func storeQuota() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let store = InMemoryReplayStore(capacity: 10, perKeyLimit: 2, now: { clock.now() })
        let until = clock.now().addingTimeInterval(70)
        #expect(try await store.claim("dpop:k1:a", until: until))
        #expect(try await store.claim("dpop:k1:b", until: until))
        let error = await #expect(throws: ReplayStoreError(.keyQuota(perKey: 2))) { try await store.claim("dpop:k1:c", until: until) }
        #expect(error?.description.contains("2 identifiers for one proof key") == true)
        #expect(try await store.claim("dpop:k1:a", until: until) == false)
        #expect(try await store.claim("dpop:k2:a", until: until))
        for number in 0..<3 { #expect(try await store.claim("logout-token\u{0}https://idp.example\u{0}jti-\(number)", until: until)) }
        try await store.release("dpop:k1:b")
        #expect(store.count(forKey: "k1") == 1)
        #expect(try await store.claim("dpop:k1:c", until: until))
        #expect(store.count == 6 && store.count(forKey: "k1") == 2 && store.count(forKey: "k2") == 1)
    }
}
