import ArgumentParser
import Foundation
import MCP
import MCPClient
import OIDC
import OIDCTesting

@main
struct MCPClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp-client",
        abstract: "Lists the tools of an MCP server (streamable HTTP), logged in by swift-oidc from the server's URL alone.",
        discussion: """
            The first run finds the server's authorization server (its 401 and RFC 9728 metadata), registers \
            this client there (RFC 7591; kept and reused), and logs you in through the browser (without one, \
            it follows the login's redirects over HTTP itself, which an authorization server that approves at \
            once, like the test server of scripts/mcp-server.sh, lets through); the login is kept in a \
            FileKeychain, and later runs use it, refreshed when it needs to be. A tool that needs more scope \
            gets one step-up login.
            """
    )

    @Option(help: "The MCP server's endpoint, e.g. http://127.0.0.1:9420/mcp.")
    var resource: String

    @Option(help: "A client id registered at its authorization server (default: register, once).")
    var clientID: String?

    @Option(help: "A scope to ask for at the first login (repeat it); default: what the server names.")
    var scope: [String] = []

    @Option(help: "Another login for the same server (it reuses the registration).")
    var profile = "default"

    @Option(help: "Call this tool (no arguments) after listing them.")
    var call: String?

    @Option(help: "Where logins and registrations are kept (default: $XDG_STATE_HOME/oidc or ~/.local/state/oidc).")
    var store: String?

    func run() async throws {
        guard let endpoint = URL(string: resource), endpoint.scheme != nil, endpoint.host != nil else {
            throw ValidationError("--resource is not a URL.")
        }
        let keychain = try FileKeychain(directory: store.map { URL(fileURLWithPath: $0) })
        let registrations = try FileRegistrationStore(directory: store.map { URL(fileURLWithPath: $0 + "/registrations", isDirectory: true) })
        try await withNIOHTTPTransport { transport in
            let login = try await MCPLogin.forResource(
                endpoint, clientID: clientID, registrations: registrations, keychain: keychain, profile: profile, transport: transport)
            let browser = HeadlessWhenNeeded(transport: transport)
            let show: @Sendable (URL) -> Void = { url in print("Opening \(url) in your browser (open it yourself if nothing happens)…") }
            if try login.storedLogin() == nil {
                let kept = try await login.logIn(scopes: scope.isEmpty ? nil : scope, browser: browser, show: show)
                let source = login.relyingParty.protectedResource?.clientSource.rawValue ?? "given"
                print("Logged in at \(kept.issuer) as client \(kept.clientID) (\(source)), scopes \(kept.tokens.scopes.joined(separator: " ")); kept as '\(profile)'.")
            }
            let tools = try await login.withStepUp(browser: browser, show: show) { try await $0.listTools() }
            print("\(tools.count) tool(s) at \(endpoint):")
            for tool in tools { print("- \(tool.name): \(tool.description ?? "")") }
            if let call {
                let answer = try await login.withStepUp(browser: browser, show: show) { try await $0.callTool(call) }
                print("\(call) → \(answer)")
            }
        }
    }
}

/// The system browser when there is one; otherwise OIDCTesting's `TestBrowser`, which follows the
/// login's redirects over HTTP (and says so).
struct HeadlessWhenNeeded: BrowserLauncher {
    let transport: any HTTPTransport

    func open(_ url: URL) async throws(OIDCError) {
        let system = SystemBrowser()
        if system.isAvailable {
            try await system.open(url)
            return
        }
        print("No browser here: following the login's redirects over HTTP.")
        let browser = TestBrowser(transport: transport)
        Task { _ = try? await browser.open(url) }
    }
}
