import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Many requests at once")
struct ConcurrentRequestTests {
    @Test("concurrent DPoP requests with their own proofs are all accepted; one proof sent many times at once is accepted exactly once")
    func concurrentProofs() async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            let requests = try (0..<40).map { _ in try fixture.dpop(token, key: key) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for request in requests { group.addTask { _ = try await fixture.server.verify(request) } }
                try await group.waitForAll()
            }
            let same = try fixture.dpop(token, key: key)
            let accepted = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<40 { group.addTask { (try? await fixture.server.verify(same)) != nil } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(accepted == 1)
        }
    }
}
