import Foundation
@testable import OIDCTesting
import Testing

/// The provider's memory of accepted proof `jti`s: a replay is refused while its proof could be
/// accepted, expired ones are forgotten, and at most `maximumRememberedProofIDs` are kept, the
/// oldest forgotten first, each step without a scan of them all.
@Suite("TestProvider: the DPoP jti ledger")
struct DPoPLedgerTests {
    static func state() throws -> ProviderState {
        ProviderState(configuration: TestProvider.Configuration(), keys: try KeyRing())
    }

    @Test("a jti is refused again until its proof is too old; then forgotten and taken")
    func replayUntilExpiry() async throws {
        let state = try Self.state()
        let now = await state.now
        _ = try await state.acceptDPoPProof(id: "j-1", rememberedUntil: now.addingTimeInterval(65), nonce: nil, nonceRequired: false)
        await #expect(throws: DPoPRefusal.self) {
            try await state.acceptDPoPProof(id: "j-1", rememberedUntil: now.addingTimeInterval(65), nonce: nil, nonceRequired: false)
        }
        await state.advanceClock(by: 66)
        _ = try await state.acceptDPoPProof(id: "j-2", rememberedUntil: now.addingTimeInterval(200), nonce: nil, nonceRequired: false)
        #expect(await state.dpop.proofIDs["j-1"] == nil)
        _ = try await state.acceptDPoPProof(id: "j-1", rememberedUntil: now.addingTimeInterval(200), nonce: nil, nonceRequired: false)
    }

    @Test("over the limit the oldest jtis are forgotten first, the newest kept")
    func boundedOldestFirst() async throws {
        let state = try Self.state()
        let now = await state.now
        let limit = DPoPLedger.maximumRememberedProofIDs
        for index in 0..<(limit + 50) {
            _ = try await state.acceptDPoPProof(id: "j-\(index)", rememberedUntil: now.addingTimeInterval(3_600), nonce: nil, nonceRequired: false)
        }
        let ledger = await state.dpop
        #expect(ledger.proofIDs.count <= limit)
        #expect(ledger.proofIDs["j-0"] == nil && ledger.proofIDs["j-49"] == nil)
        #expect(ledger.proofIDs["j-\(limit + 49)"] != nil && ledger.proofIDs["j-100"] != nil)
        await #expect(throws: DPoPRefusal.self) {
            try await state.acceptDPoPProof(id: "j-\(limit + 49)", rememberedUntil: now.addingTimeInterval(3_600), nonce: nil, nonceRequired: false)
        }
    }
}
