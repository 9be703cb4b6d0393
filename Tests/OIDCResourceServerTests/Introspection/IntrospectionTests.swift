import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Opaque access tokens through introspection (RFC 7662)")
struct IntrospectionTests {
    static let api = TestProvider.Client.confidential(id: "api", secret: "api-secret-api-secret-api-secret-32")

    /// A provider whose client `api` introspects its own tokens (the provider describes a token
    /// only to the client it was issued to), and a server that trusts no JWT issuer.
    static func run(
        _ configure: (inout IntrospectionSettings) -> Void = { _ in },
        _ body: (TestProvider, ResourceServer, ManualClock) async throws -> Void
    ) async throws {
        try await withTestProvider(.init(clients: [.default, api])) { provider in
            let rp = try await provider.relyingParty(client: api)
            var settings = IntrospectionSettings(client: rp.tokenClient)
            configure(&settings)
            let clock = ManualClock()
            var configuration = ResourceServer.Configuration(resource: ResourceFixture.resource, issuers: [])
            configuration.audiences = ["api"]
            configuration.introspection = settings
            configuration.now = { clock.now() }
            try await body(provider, try ResourceServer(configuration), clock)
        }
    }

    @Test("an active token is accepted with the answer's facts; the answer is cached until exp, one introspection for many requests")
    func activeCached() async throws {
        try await Self.run { provider, server, clock in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let request = ResourceFixture.bearer(tokens.accessToken.revealedValue)
            let access = try await server.verify(request, requiring: ["orders:read"])
            let user = await provider.user
            #expect(access.source == .introspection && access.clientID == "api" && access.subject == user.subject)
            #expect(access.issuer == provider.issuer && access.binding == .bearer)
            for _ in 0..<5 { _ = try await server.verify(request) }
            #expect(await provider.requestCount(.introspection) == 1)
            clock.advance(3_601)
            _ = try await server.verify(request)
            #expect(await provider.requestCount(.introspection) == 2)
            clock.advance(60)
            #expect(try await ResourceFixture.refusalFrom(server, request).rule == .tokenExpired)
        }
    }

    @Test("concurrent requests with one token share one introspection")
    func singleFlight() async throws {
        try await Self.run { provider, server, _ in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let request = ResourceFixture.bearer(tokens.accessToken.revealedValue)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { _ = try await server.verify(request) } }
                try await group.waitForAll()
            }
            #expect(await provider.requestCount(.introspection) == 1)
        }
    }

    @Test("an inactive answer is cached briefly, then asked again; a refresh token is not an access token")
    func inactive() async throws {
        try await Self.run({ $0.inactiveCacheDuration = 10 }) { provider, server, clock in
            let request = ResourceFixture.bearer("not-a-token-the-provider-issued")
            #expect(try await ResourceFixture.refusalFrom(server, request).rule == .inactiveToken)
            #expect(try await ResourceFixture.refusalFrom(server, request).rule == .inactiveToken)
            #expect(await provider.requestCount(.introspection) == 1)
            clock.advance(11)
            #expect(try await ResourceFixture.refusalFrom(server, request).rule == .inactiveToken)
            #expect(await provider.requestCount(.introspection) == 2)

            let tokens = try await provider.issueTokens(clientID: "api", scope: "openid offline_access")
            let refresh = try #require(tokens.refreshToken)
            #expect(try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer(refresh.revealedValue)).rule == .wrongTokenType)
        }
    }

    @Test("a DPoP-bound opaque token needs its proof; the cache stays within its capacity")
    func boundAndBounded() async throws {
        try await Self.run({ $0.cacheCapacity = 3 }) { provider, server, _ in
            let key = try DPoPKey.generate()
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read", dpopKeyThumbprint: key.thumbprint)
            let token = tokens.accessToken.revealedValue
            #expect(try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer(token)).rule == .boundTokenAsBearer)
            let proof = try key.proof(method: "GET", url: URL(string: ResourceFixture.target)!, accessToken: tokens.accessToken)
            let access = try await server.verify(ResourceFixture.request([("Authorization", "DPoP " + token), ("DPoP", proof)]))
            #expect(access.binding == .dpop(keyThumbprint: key.thumbprint))

            for index in 0..<6 { _ = try? await server.verify(ResourceFixture.bearer("junk-\(index)")) }
            let before = await provider.requestCount(.introspection)
            _ = try? await server.verify(ResourceFixture.bearer("junk-0"))
            #expect(await provider.requestCount(.introspection) == before + 1)
        }
    }

    @Test("the introspection endpoint failing is a 503 without a challenge, not a verdict on the token")
    func unavailable() async throws {
        try await Self.run { provider, server, _ in
            await provider.failNextRequests(1, to: .introspection, with: .oauthError("server_error", status: 500))
            let refusal = try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer("some-opaque-token"))
            #expect(refusal.rule == .introspectionUnavailable && refusal.status == 503 && refusal.headers.fields.isEmpty)
        }
    }
}

extension ResourceFixture {
    static func refusalFrom(_ server: ResourceServer, _ request: ResourceRequest) async throws -> AccessRefusal {
        do {
            let access = try await server.verify(request)
            throw UnexpectedAccess(subject: access.subject)
        } catch let refusal as AccessRefusal {
            return refusal
        }
    }
}
