import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OIDC
import OIDCTesting
import Testing

/// The example of docs/testing.md, as written there: it must keep working.
@Suite("The testing guide's example", .timeLimit(.minutes(1)))
struct TestingGuideTests {
    @Test("a test starts the provider, logs in, and calls the protected resource")
    func profileLoads() async throws {
        try await withTestProvider { provider in
            let store = InMemoryTokenStore()
            let login = try await provider.logIn(into: store)

            var request = URLRequest(url: URL(string: provider.protectedResourceURL)!)
            request.setValue("Bearer \(login.tokens.accessToken.revealedValue)", forHTTPHeaderField: "Authorization")
            let (body, response) = try await URLSession.shared.data(for: request)
            #expect((response as! HTTPURLResponse).statusCode == 200)
            #expect(String(decoding: body, as: UTF8.self).contains(login.subject!))
        }
    }
}
