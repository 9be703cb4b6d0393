import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The example of docs/testing.md, as written there: it must keep working.
@Suite("The testing guide's example", .timeLimit(.scaledMinutes(1)))
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

    /// The first example of the DocC article TestingWithTestProvider, as written there.
    @Test("a test starts logged in with the relying party's session: a 401, one refresh, 200")
    func sessionRefreshesAfterA401() async throws {
        try await withTestProvider { provider in
            let store = InMemoryTokenStore()
            let login = try await provider.logIn(into: store)
            #expect(login.subject == "test-user")
            let rp = try await provider.relyingParty()
            let session = rp.session(store: store, key: TokenStoreKey(service: "oidc", account: "test-client"),
                                     allowlist: .default(for: provider.protectedResource))

            await provider.expireAccessTokens()  // the next API call gets a 401
            let response = try await session.send(HTTPRequest(url: provider.protectedResource))
            #expect(response.status == 200)
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }
}
