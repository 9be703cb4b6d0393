import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Discovery (OpenID Connect Discovery 1.0, RFC 8414) against ``TestProvider`` over real HTTP on
/// loopback, through the production transport.
@Suite("Provider discovery", .timeLimit(.scaledMinutes(1)))
struct ProviderDiscoveryTests {
    @Test("discovery validates the document and is cached per issuer; concurrent callers share one fetch")
    func discovery() async throws {
        try await TokenClientTests.withProvider { provider, transport in
            let discovery = ProviderDiscovery(transport: transport)
            let metadata = try await discovery.metadata(for: provider.issuer)
            #expect(metadata.issuer == provider.issuer)
            #expect(metadata.tokenEndpoint?.absoluteString == provider.tokenEndpoint)
            #expect(metadata.jwksURI?.absoluteString == provider.jwksURI)
            #expect(metadata.advertised.codeChallengeMethodsSupported == ["S256"])
            #expect(metadata.advertised.authorizationResponseIssParameterSupported)
            let configuration = try metadata.configuration()
            #expect(configuration.authorizationResponseIssParameterSupported)
            #expect(configuration.revocationEndpoint?.absoluteString == provider.revocationEndpoint)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { _ = try? await discovery.metadata(for: provider.issuer) } }
            }
            #expect(await provider.requestCount(.discovery) == 1)
        }
    }

    @Test("an issuer that differs from the document's, even by a trailing slash, is refused")
    func issuerMismatch() async throws {
        try await TokenClientTests.withProvider { provider, transport in
            let error = await #expect(throws: OIDCError.self) { try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer + "/") }
            #expect(error?.code == .issuerMismatch)
            #expect(error?.category == .security)
        }
    }

    @Test("an issuer with a path is discovered under it")
    func issuerPath() async throws {
        try await TokenClientTests.withProvider(.init(issuerPath: "/realms/test")) { provider, transport in
            #expect(provider.issuer.hasSuffix("/realms/test"))
            let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
            #expect(metadata.issuer == provider.issuer)
        }
    }

    @Test("the RFC 8414 location inserts the well-known segment before the issuer's path")
    func documentURLs() throws {
        let urls = try ProviderDiscovery.wellKnownURLs(for: "https://idp.example/tenant/a")
        #expect(urls.map(\.absoluteString) == [
            "https://idp.example/tenant/a/.well-known/openid-configuration",
            "https://idp.example/.well-known/oauth-authorization-server/tenant/a",
        ])
        #expect(try ProviderDiscovery.wellKnownURLs(for: "https://idp.example/").map(\.absoluteString) == [
            "https://idp.example/.well-known/openid-configuration", "https://idp.example/.well-known/oauth-authorization-server",
        ])
        #expect(throws: OIDCError.self) { try ProviderDiscovery.wellKnownURLs(for: "http://idp.example") }
        #expect(throws: OIDCError.self) { try ProviderDiscovery.wellKnownURLs(for: "https://idp.example?x=1") }
    }

    @Test("discovery of an unreachable or failing provider is a transient error")
    func discoveryFailures() async throws {
        try await TokenClientTests.withProvider { provider, transport in
            await provider.failNextRequests(1, to: .discovery, with: .serviceUnavailable)
            let error = await #expect(throws: OIDCError.self) { try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer) }
            #expect(error?.code == .serverError)
            #expect(error?.category == .transient)
            #expect(error?.context["retryAfter"] == "1")
        }
        let transport = NIOHTTPTransport()
        defer { Task { try? await transport.shutdown() } }
        let refused = await #expect(throws: OIDCError.self) { try await ProviderDiscovery(transport: transport).metadata(for: "http://127.0.0.1:1") }
        #expect(refused?.category == .transient)
    }
}
