import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

/// Whose clock a replay store judges expiries by (security review 5, I1 and M1): the caller's, and
/// a record is kept for a margin after its expiry, so that a caller whose clock runs ahead does not
/// make the store forget what another caller would still accept.
@Suite("Replay records and clocks: the caller's clock, a purge margin (security review 5, I1, M1)")
struct ReplayClockTests {
    @Test("with the resource server's clock 600 s behind or ahead of the system's, the same proof is refused the second time (default store)", arguments: [-600.0, 600.0])
    func shiftedClockRefusesReplay(_ offset: TimeInterval) async throws {
        let shifted = ManualClock(Date().addingTimeInterval(offset))
        try await ResourceFixture.run({ $0.now = { shifted.now() } }) { fixture in
            let key = try DPoPKey.generate()
            let now = Int(shifted.now().timeIntervalSince1970)
            let token = try await fixture.provider.signJWT(
                claims: fixture.claims(["iat": now, "exp": now + 300, "cnf": ["jkt": key.thumbprint]]))
            let request = try fixture.dpop(token, key: key, iat: shifted.now())
            _ = try await fixture.server.verify(request)
            #expect(try await fixture.refusal(request).rule == .replayedProof)
            shifted.advance(30)
            #expect(try await fixture.refusal(request).rule == .replayedProof)
        }
    }

    @Test("in memory: a claim by a caller whose clock is 30 s ahead (which sweeps) leaves the record, and the replay at the right clock is refused; with no margin it would pass")
    func inMemorySkewedSweep() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for margin in [60.0, 0] {
            let store = InMemoryReplayStore(purgeMargin: margin, now: { start })
            let identifier = "dpop:thumbprint:jti-1"
            // Instance A, right clock, real time T: the victim's proof, remembered until T + 70.
            #expect(try await store.claim(identifier, until: start.addingTimeInterval(70), now: start))
            #expect(try await store.claim(identifier, until: start.addingTimeInterval(70), now: start.addingTimeInterval(10)) == false)
            // Instance C, 30 s ahead, real time T + 41: another proof; its claim sweeps at T + 71.
            #expect(try await store.claim("dpop:other:jti-2", until: start.addingTimeInterval(71 + 70), now: start.addingTimeInterval(71)))
            // A, real time T + 45: the proof is young enough for A; its record decides.
            let replayed = try await store.claim(identifier, until: start.addingTimeInterval(70), now: start.addingTimeInterval(45))
            if margin > 0 {
                #expect(replayed == false && store.count == 2)
            } else {
                #expect(replayed == true, "without a margin the sweep forgot the live record: the reason for the margin")
            }
        }
    }

    @Test("in memory: a record is forgotten once expired for longer than the margin; a full store forgets those within it rather than refuse")
    func inMemoryMarginBounds() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let store = InMemoryReplayStore(capacity: 2, purgeMargin: 60, now: { clock.now() })
        #expect(try await store.claim("a", until: clock.now().addingTimeInterval(10)))
        clock.advance(30)
        #expect(try await store.claim("b", until: clock.now().addingTimeInterval(100)))
        #expect(store.count == 2)  // "a" expired 20 s ago: kept within its margin
        clock.advance(2)
        #expect(try await store.claim("c", until: clock.now().addingTimeInterval(100)))  // full: "a" goes, "b" stays
        #expect(store.count == 2)
        #expect(try await store.claim("b", until: clock.now().addingTimeInterval(100)) == false)
        await #expect(throws: ReplayStoreError(.full(capacity: 2))) {
            try await store.claim("d", until: clock.now().addingTimeInterval(100))
        }
    }

    @Test("a logout token is remembered a leeway beyond its last accepted second: its replay at iat + maximumAge + leeway is refused")
    func logoutTokenMargin() async throws {
        try await LogoutFixture.run { fixture throws in
            let issued = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let token = try await fixture.provider.logoutToken(TestProvider.LogoutTokenContents(subject: "user-1", issuedAt: issued))
            #expect(await fixture.refusal(token, now: issued) == nil)
            let last = issued.addingTimeInterval(fixture.verifier.maximumAge + fixture.verifier.leeway)
            #expect(await fixture.refusal(token, now: last)?.rule == .replayed)
            #expect(await fixture.refusal(token, now: last.addingTimeInterval(1))?.rule == .issuedAt)
        }
    }
}
