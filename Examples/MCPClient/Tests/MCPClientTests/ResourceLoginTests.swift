import Foundation
import MCP
@testable import MCPClient
import OIDC
import OIDCTesting
import Testing

/// `MCPLogin.forResource` against OIDCTesting's provider and the protected resource it serves beside
/// itself (RFC 9728 metadata, registration, resource-bound tokens, a step-up route), through the MCP
/// swift-sdk's real `HTTPClientTransport`: always run, where the tests against the MCP Python SDK's
/// server need it started.
@Suite("MCPLogin from a resource", .timeLimit(.minutes(1)))
struct ResourceLoginTests {
    static func configuration(dpop: Bool) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.registration = TestProvider.Registration()
        configuration.protectedResource.scopesSupported = ["read"]
        if dpop { configuration.dpop = .init(support: .required, nonces: .required(at: [.token], rotatingAfter: 5)) }
        return configuration
    }

    @Test("DPoP from the resource's URL: registered, a DPoP-bound login for the resource, proofs the resource takes")
    func dpopBoundLogin() async throws {
        let directory = OIDCAuthorizerTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestProvider(Self.configuration(dpop: true)) { provider in
            try await withNIOHTTPTransport { transport in
                let resource = try #require(URL(string: provider.resourceURL))
                let login = try await MCPLogin.forResource(
                    resource, registrations: InMemoryRegistrationStore(), keychain: try FileKeychain(directory: directory), dpop: true, transport: transport)
                #expect(login.relyingParty.protectedResource?.clientSource == .registered)
                let kept = try await login.logIn(browser: OIDCAuthorizerTests.BackgroundBrowser(transport: transport))
                #expect(kept.dpopKey != nil)
                #expect(kept.resource == provider.resourceURL)

                // The resource takes the DPoP-bound token only with its proof (the provider requires DPoP).
                let authorizer = OIDCAuthorizer(session: login.session())
                let body = try await OIDCAuthorizerTests.post(through: authorizer, to: resource)
                #expect(body.contains(provider.resourceURL))  // the token's aud
                #expect(authorizer.authorizationHeader(for: resource)?.hasPrefix("DPoP ") == true)
                #expect(await provider.dpopProofs(.token).last?.isAccepted == true)
                #expect(await provider.registrationCount() == 1)
            }
        }
    }

    @Test("step-up through the transport: 403 insufficient_scope names the union, one login for it, then 200")
    func stepUp() async throws {
        let directory = OIDCAuthorizerTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestProvider(Self.configuration(dpop: false)) { provider in
            try await withNIOHTTPTransport { transport in
                let resource = try #require(URL(string: provider.resourceURL))
                let admin = try #require(URL(string: provider.stepUpResourceURL))
                let login = try await MCPLogin.forResource(
                    resource, registrations: InMemoryRegistrationStore(), keychain: try FileKeychain(directory: directory), transport: transport)
                let granted = try await login.logIn(browser: OIDCAuthorizerTests.BackgroundBrowser(transport: transport)).tokens.scopes
                #expect(!granted.contains("admin"))

                let authorizer = OIDCAuthorizer(session: login.session())
                await #expect(throws: (any Error).self) { _ = try await OIDCAuthorizerTests.post(through: authorizer, to: admin) }
                guard case .insufficientScope(let scopes) = authorizer.problem else {
                    Issue.record("expected insufficientScope, got \(String(describing: authorizer.problem))")
                    return
                }
                #expect(scopes == granted + ["admin"])

                try await login.logIn(scopes: scopes, browser: OIDCAuthorizerTests.BackgroundBrowser(transport: transport))
                let body = try await OIDCAuthorizerTests.post(through: OIDCAuthorizer(session: login.session()), to: admin)
                #expect(body.contains("admin"))
                #expect(await provider.registrationCount() == 1)
            }
        }
    }

    @Test("a resource whose metadata requires DPoP-bound tokens, dpop not given: one discovery, a DPoP-bound login the resource takes")
    func dpopWhenTheServerWantsIt() async throws {
        let directory = OIDCAuthorizerTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Self.configuration(dpop: false)
        configuration.protectedResource.requiresDPoP = true
        try await withTestProvider(configuration) { provider in
            try await withNIOHTTPTransport { transport in
                let resource = try #require(URL(string: provider.resourceURL))
                let login = try await MCPLogin.forResource(
                    resource, registrations: InMemoryRegistrationStore(), keychain: try FileKeychain(directory: directory), transport: transport)
                #expect(login.relyingParty.configuration.dpop != .off)
                #expect(await provider.requestCount(.resourceMetadata) == 1)
                let kept = try await login.logIn(browser: OIDCAuthorizerTests.BackgroundBrowser(transport: transport))
                #expect(kept.dpopKey != nil)
                let authorizer = OIDCAuthorizer(session: login.session())
                let body = try await OIDCAuthorizerTests.post(through: authorizer, to: resource)
                #expect(body.contains(provider.resourceURL))
                #expect(authorizer.authorizationHeader(for: resource)?.hasPrefix("DPoP ") == true)
            }
        }
    }
}
