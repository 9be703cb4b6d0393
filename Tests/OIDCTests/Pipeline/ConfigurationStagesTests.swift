import Foundation
import OIDC
import OIDCTesting
import Testing

/// A user's stages given once, in the relying party's configuration: every call to the provider and
/// every request of every session the relying party makes passes them, with no other wiring.
@Suite("Pipelines: stages in the relying party's configuration", .timeLimit(.minutes(1)))
struct ConfigurationStagesTests {
    static let storeKey = TokenStoreKey(service: "configuration-stages-tests", account: "user")

    @Test("RelyingParty.Configuration(providerStages:resourceStages:): the session's requests pass the resource stage, the refresh after a 401 and userinfo the provider stage, and each count is the provider's")
    func configuredOnce() async throws {
        try await withTestProvider { provider in
            let providerStage = TaggingStage(header: "X-Trace")
            let resourceStage = TaggingStage()
            let rp = try await provider.relyingParty(
                configuration: RelyingParty.Configuration(providerStages: [providerStage], resourceStages: [resourceStage]))
            let store = InMemoryTokenStore()
            let login = try await provider.logIn(into: store, key: Self.storeKey)
            let session = rp.session(store: store, key: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            await provider.expireAccessTokens()
            await provider.resetCounters()
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            let resourceRequests = await provider.requestCount(.protectedResource)
            #expect(resourceRequests == 2, "the refused request and its retry after the refresh")
            #expect(resourceStage.count(.resource) == resourceRequests)
            #expect(resourceStage.requests.map(\.status) == [401, 200])
            #expect(resourceStage.requests.allSatisfy { $0.authorizationScheme == "Bearer" })
            #expect(providerStage.count(.provider(.grant(.refreshToken))) == 1)
            #expect(await provider.grantCount("refresh_token") == 1)

            let fresh = try #require(await store.load(Self.storeKey))
            let subject = try #require(login.subject)
            _ = try await rp.tokenClient.userinfo(accessToken: fresh.tokens.accessToken, expectedSubject: subject)
            #expect(providerStage.count(.provider(.userinfo)) == 1)
            #expect(providerStage.count(.resource) == 0 && resourceStage.count(.provider(.userinfo)) == 0)
        }
    }
}
