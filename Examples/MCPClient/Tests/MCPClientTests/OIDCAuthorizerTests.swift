import Foundation
import MCP
@testable import MCPClient
import OIDC
import OIDCTesting
import Testing

/// The authorizer inside the MCP swift-sdk's real `HTTPClientTransport`, against OIDCTesting's
/// provider over loopback HTTP: its protected resource (`/api/me`) takes the transport's POSTs and
/// checks their bearer tokens and DPoP proofs as a resource server would.
@Suite("OIDCAuthorizer", .timeLimit(.minutes(1)))
struct OIDCAuthorizerTests {
    struct BackgroundBrowser: BrowserLauncher {
        let transport: any HTTPTransport
        func open(_ url: URL) async throws(OIDCError) {
            let browser = TestBrowser(transport: transport)
            Task { _ = try await browser.open(url) }
        }
    }

    /// Logs in to `provider` with `dpop`, keeps the login in a keychain at `directory`.
    static func logIn(_ provider: TestProvider, directory: URL, dpop: DPoPUse = .off, transport: any HTTPTransport) async throws -> MCPLogin {
        let relyingParty = try await RelyingParty.discover(
            issuer: provider.issuer, clientID: "test-client", transport: transport, configuration: RelyingParty.Configuration(dpop: dpop))
        let login = MCPLogin(relyingParty: relyingParty, keychain: try FileKeychain(directory: directory), resource: provider.protectedResource)
        try await login.logIn(scopes: ["openid", "offline_access"], browser: BackgroundBrowser(transport: transport))
        return login
    }

    /// One POST through the transport, as the MCP client sends a message; the answer's body.
    static func post(through authorizer: OIDCAuthorizer, to endpoint: URL) async throws -> String {
        let transport = authorizer.transport(to: endpoint)
        try await transport.connect()
        defer { Task { await transport.disconnect() } }
        try await transport.send(Data(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.utf8))
        var answers = await transport.receive().makeAsyncIterator()
        let answer = try #require(try await answers.next())
        return String(decoding: answer, as: UTF8.self)
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("mcp-client-\(UUID().uuidString)")
    }

    @Test("bearer: the stored login's token, a forced refresh on a 401 kept in the keychain, read by another process")
    func bearerAndRefresh() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let login = try await Self.logIn(provider, directory: directory, transport: transport)
                let user = await provider.user.subject
                let first = try await Self.post(through: OIDCAuthorizer(session: login.session()), to: provider.protectedResource)
                #expect(first.contains(user))
                let before = try #require(try login.keychain.load(login.key))

                // The provider forgets its access tokens: one 401, one refresh, the retry passes.
                await provider.expireAccessTokens()
                let authorizer = OIDCAuthorizer(session: login.session())
                #expect(try await Self.post(through: authorizer, to: provider.protectedResource).contains(user))
                #expect(await provider.grantCount("refresh_token") == 1)
                #expect(authorizer.problem == nil)
                let after = try #require(try login.keychain.load(login.key))
                #expect(after.tokens.accessToken != before.tokens.accessToken)

                // Another process: a new keychain value on the same directory, no login of its own.
                let again = MCPLogin(relyingParty: login.relyingParty, keychain: try FileKeychain(directory: directory), resource: login.resource)
                #expect(try await Self.post(through: OIDCAuthorizer(session: again.session()), to: provider.protectedResource).contains(user))
                #expect(await provider.grantCount("refresh_token") == 1)
            }
        }
    }

    @Test("DPoP: a fresh proof per request, a nonce challenge costs one retry and no refresh")
    func dpopWithNonce() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = TestProvider.Configuration()
        configuration.dpop = .init(support: .required, nonces: .required(rotatingAfter: 5))
        try await withTestProvider(configuration) { provider in
            try await withNIOHTTPTransport { transport in
                let login = try await Self.logIn(provider, directory: directory, dpop: .on, transport: transport)
                #expect(try login.keychain.load(login.key)?.dpopKey != nil)
                let authorizer = OIDCAuthorizer(session: login.session())
                // The session knows the server's nonce from the login (one origin): a new one makes the resource challenge.
                try await provider.rotateDPoPNonce()
                #expect(try await Self.post(through: authorizer, to: provider.protectedResource).contains(await provider.user.subject))
                #expect(authorizer.authorizationHeader(for: provider.protectedResource)?.hasPrefix("DPoP ") == true)
                let proofs = await provider.dpopProofs(.protectedResource)
                #expect(proofs.map(\.error) == ["use_dpop_nonce", nil])
                #expect(Set(proofs.map(\.compact)).count == 2)
                #expect(await provider.grantCount("refresh_token") == 0)
            }
        }
    }

    @Test("nobody logged in: no request is authorized, and the problem says so")
    func notLoggedIn() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let relyingParty = try await RelyingParty.discover(issuer: provider.issuer, clientID: "test-client", transport: transport)
                let login = MCPLogin(relyingParty: relyingParty, keychain: try FileKeychain(directory: directory), resource: provider.protectedResource)
                let authorizer = OIDCAuthorizer(session: login.session())
                await #expect(throws: (any Error).self) { _ = try await Self.post(through: authorizer, to: provider.protectedResource) }
                guard case .notAuthorized(let error) = authorizer.problem else {
                    Issue.record("expected notAuthorized, got \(String(describing: authorizer.problem))")
                    return
                }
                #expect((error as? OIDCError)?.endsLogin == true)
            }
        }
    }

    @Test("an endpoint off the session's allowlist, or plain http off loopback, gets no token")
    func endpointSecurity() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let relyingParty = try await RelyingParty.discover(issuer: provider.issuer, clientID: "test-client", transport: transport)
                let login = MCPLogin(relyingParty: relyingParty, keychain: try FileKeychain(directory: directory), resource: provider.protectedResource)
                let authorizer = OIDCAuthorizer(session: login.session())
                #expect(throws: OIDCError.self) { try authorizer.validateEndpointSecurity(for: URL(string: "http://mcp.example/mcp")!) }
                #expect(throws: OIDCError.self) { try authorizer.validateEndpointSecurity(for: URL(string: "https://other.example/mcp")!) }
                try authorizer.validateEndpointSecurity(for: provider.protectedResource)
            }
        }
    }
}
