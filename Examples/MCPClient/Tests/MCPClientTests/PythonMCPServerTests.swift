import Foundation
import MCP
@testable import MCPClient
import OIDC
import OIDCTesting
import Testing

/// The example against a real MCP server from PyPI (the MCP Python SDK; `scripts/mcp-server.sh`,
/// docs/interop.md), from its URL alone: skipped unless its `OIDC_MCP_*` variables are set. The
/// server is shared with other tests, so each test keeps its own logins and registrations and looks
/// only at its own client in the server's log.
@Suite("MCPClient against the MCP Python SDK", .enabled(if: MCPTestServer.current != nil), .timeLimit(.minutes(2)))
struct PythonMCPServerTests {
    let server = MCPTestServer.current!

    /// The user's browser: follows the redirects (the server approves at once).
    struct RedirectFollower: BrowserLauncher {
        let transport: any HTTPTransport
        func open(_ url: URL) async throws(OIDCError) {
            let browser = TestBrowser(transport: transport)
            Task { _ = try await browser.open(url) }
        }
    }

    /// A keychain and a registration store of its own, removed at the end.
    static func withStores<Result>(_ body: (FileKeychain, FileRegistrationStore, URL) async throws -> Result) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mcp-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(
            try FileKeychain(directory: directory.appendingPathComponent("logins")),
            try FileRegistrationStore(directory: directory.appendingPathComponent("registrations", isDirectory: true)), directory)
    }

    @Test("from the URL alone: a registration, a login with resource, the tools listed; a refresh carries resource; another process reuses the login")
    func listsToolsThroughARegistration() async throws {
        try await Self.withStores { keychain, registrations, _ in
            try await withNIOHTTPTransport { transport in
                let login = try await MCPLogin.forResource(server.resource, registrations: registrations, keychain: keychain, transport: transport)
                let discovered = try #require(login.relyingParty.protectedResource)
                #expect(discovered.clientSource == .registered)
                #expect(discovered.isPlainOAuth)
                #expect(discovered.identifier.value == server.resource.absoluteString)
                let clientID = login.relyingParty.clientID

                let kept = try await login.logIn(browser: RedirectFollower(transport: transport))
                #expect(kept.resource == server.resource.absoluteString)
                #expect(kept.tokens.scopes == [server.scope])
                #expect(kept.subject == nil)

                let tools = try await login.withStepUp(browser: RedirectFollower(transport: transport)) { try await $0.listTools() }
                #expect(Set(tools.map(\.name)).isSuperset(of: ["whoami", "add", server.stepUpTool]))

                var log = try await server.log(transport)
                let registration = try #require(log.registrations.first { $0.client_id == clientID })
                #expect(registration.application_type == "native")
                #expect(registration.token_endpoint_auth_method == "none")
                #expect(registration.grant_types.contains("refresh_token"))
                #expect(log.authorizations.filter { $0.client_id == clientID }.map(\.resource) == [server.resource.absoluteString])
                #expect(log.token_requests.filter { $0.client_id == clientID }.map(\.resource) == [[server.resource.absoluteString]])

                // The server forgets its access tokens: one 401, one refresh with the same resource.
                try await server.expireAccessTokens(transport)
                let answer = try await MCPToolbox(endpoint: server.resource, session: login.session()).callTool("add", arguments: ["a": 2, "b": 3])
                #expect(answer == "5")
                log = try await server.log(transport)
                let refreshes = log.token_requests.filter { $0.client_id == clientID && $0.grant_type == "refresh_token" }
                #expect(refreshes.map(\.resource) == [[server.resource.absoluteString]])

                // Another process: a new keychain value on the same files, no login of its own.
                let again = MCPLogin(relyingParty: login.relyingParty, keychain: try FileKeychain(directory: keychain.directory), resource: server.resource)
                let whoami = try await MCPToolbox(endpoint: server.resource, session: again.session()).callTool("whoami")
                #expect(whoami.contains(clientID))
                #expect(try await server.log(transport).authorizations.filter { $0.client_id == clientID }.count == 1)
            }
        }
    }

    @Test("a tool that needs more scope: 403 insufficient_scope, one step-up login for the union, then it works")
    func stepUp() async throws {
        try await Self.withStores { keychain, registrations, _ in
            try await withNIOHTTPTransport { transport in
                let login = try await MCPLogin.forResource(server.resource, registrations: registrations, keychain: keychain, transport: transport)
                try await login.logIn(browser: RedirectFollower(transport: transport))

                let toolbox = MCPToolbox(endpoint: server.resource, session: login.session())
                do {
                    _ = try await toolbox.callTool(server.stepUpTool)
                    Issue.record("the tool answered without \(server.stepUpScope)")
                } catch let error as MCPAuthorizationError {
                    guard case .insufficientScope(let scopes) = error.problem else { throw error }
                    #expect(scopes == [server.scope, server.stepUpScope])
                }

                let answer = try await login.withStepUp(browser: RedirectFollower(transport: transport)) { try await $0.callTool(server.stepUpTool) }
                #expect(answer.contains("admin report"))
                #expect(try login.storedLogin()?.tokens.scopes == [server.scope, server.stepUpScope])
                let clientID = login.relyingParty.clientID
                let authorizations = try await server.log(transport).authorizations.filter { $0.client_id == clientID }
                #expect(authorizations.map(\.scopes) == [[server.scope], [server.scope, server.stepUpScope]])
            }
        }
    }

    @Test("a second profile reuses the registration: no new client at the server")
    func secondProfileReusesTheRegistration() async throws {
        try await Self.withStores { keychain, registrations, _ in
            try await withNIOHTTPTransport { transport in
                let first = try await MCPLogin.forResource(server.resource, registrations: registrations, keychain: keychain, transport: transport)
                try await first.logIn(browser: RedirectFollower(transport: transport))
                let second = try await MCPLogin.forResource(
                    server.resource, registrations: registrations, keychain: keychain, profile: "work", transport: transport)
                #expect(second.relyingParty.protectedResource?.clientSource == .storedRegistration)
                #expect(second.relyingParty.clientID == first.relyingParty.clientID)
                #expect(second.key != first.key)
                try await second.logIn(browser: RedirectFollower(transport: transport))
                let tools = try await MCPToolbox(endpoint: server.resource, session: second.session()).listTools()
                #expect(!tools.isEmpty)

                let log = try await server.log(transport)
                #expect(log.registrations.filter { $0.client_id == first.relyingParty.clientID }.count == 1)
                #expect(log.authorizations.filter { $0.client_id == first.relyingParty.clientID }.count == 2)
            }
        }
    }
}
