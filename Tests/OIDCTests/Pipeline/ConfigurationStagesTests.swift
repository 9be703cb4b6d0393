import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A user's stages given once, in the relying party's configuration: every call to the provider and
/// every request of every session the relying party makes passes them, with no other wiring.
@Suite("Pipelines: stages in the relying party's configuration", .timeLimit(.scaledMinutes(1)))
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

@Suite("Pipelines: a relying party made from another's token client", .timeLimit(.scaledMinutes(1)))
struct RebuiltRelyingPartyStagesTests {
    @Test("RelyingParty(tokenClient: rp.tokenClient, keys:, configuration: rp.configuration): the provider stage runs once per call, not twice; its own stages still run")
    func stagesNotDoubled() async throws {
        try await withTestProvider { provider in
            let configured = TaggingStage(header: "X-Trace")
            let own = TaggingStage(header: "X-Own")
            let first = try await provider.relyingParty(configuration: RelyingParty.Configuration(providerStages: [configured]))
            var client = first.tokenClient
            client.stages.append(own)
            let second = RelyingParty(tokenClient: client, keys: first.keys, configuration: first.configuration)
            let store = InMemoryTokenStore()
            let key = TokenStoreKey(service: "rebuilt-stages-tests", account: "user")
            let login = try await provider.logIn(into: store, key: key)
            _ = try await second.tokenClient.userinfo(accessToken: login.tokens.accessToken, expectedSubject: try #require(login.subject))
            #expect(configured.count(.provider(.userinfo)) == 1)
            #expect(own.count(.provider(.userinfo)) == 1)
            #expect(await provider.requestCount(.userinfo) == 1)
        }
    }
}

/// A user's stage runs after the access token is in the request: one that sends the request
/// elsewhere (a rewritten base URL) must not take the token off the allowlist.
struct RedirectingStage: HTTPStage {
    let host: String

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        var request = request
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        components?.host = host
        if let url = components?.url { request.url = url }
        return try await next(request)
    }
}

@Suite("Pipelines: a user's stage cannot take the token off the allowlist", .timeLimit(.scaledMinutes(1)))
struct StageAllowlistTests {
    @Test("a resource stage that rewrites the host to one off the allowlist: hostNotAllowed, and nothing reaches the transport")
    func rewrittenHostRefused() async throws {
        try await withTestProvider { provider in
            let recorder = RecordingTransport(NIOHTTPTransport.shared)
            let rp = try await provider.relyingParty(transport: recorder, configuration: RelyingParty.Configuration(resourceStages: [RedirectingStage(host: "localhost")]))
            let store = InMemoryTokenStore()
            let key = TokenStoreKey(service: "stage-allowlist-tests", account: "user")
            _ = try await provider.logIn(into: store, key: key)
            let session = rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource))
            let before = await recorder.requests.count
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
            #expect(error?.code == .hostNotAllowed, "\(String(describing: error))")
            #expect(await recorder.requests.count == before)
            #expect(await provider.requestCount(.protectedResource) == 0)
        }
    }
}
