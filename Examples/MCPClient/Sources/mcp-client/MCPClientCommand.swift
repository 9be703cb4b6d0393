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
        abstract: "Lists the tools of an MCP server (streamable HTTP) with a login kept by swift-oidc.",
        discussion: """
            The first run logs you in through the browser (without one, it follows the login's redirects \
            over HTTP itself, which an authorization server that approves at once, like the test server of \
            scripts/mcp-server.sh, lets through) and keeps the login in a FileKeychain; later runs use it, \
            refreshed when it needs to be.
            """
    )

    @Option(help: "The MCP server's endpoint, e.g. http://127.0.0.1:9420/mcp.")
    var resource: String

    @Option(help: "Its authorization server's issuer URL.")
    var issuer: String

    @Option(help: "Your client id there, registered with the redirect URI http://127.0.0.1/callback.")
    var clientID: String

    @Option(help: "A scope to ask for at the login (repeat it); the authorization server's default without one.")
    var scope: [String] = []

    @Option(help: "Call this tool (no arguments) after listing them.")
    var call: String?

    @Option(help: "Where the login is kept (default: $XDG_STATE_HOME/oidc or ~/.local/state/oidc).")
    var store: String?

    func run() async throws {
        guard let endpoint = URL(string: resource), endpoint.scheme != nil, endpoint.host != nil else {
            throw ValidationError("--resource is not a URL.")
        }
        let keychain = try FileKeychain(directory: store.map { URL(fileURLWithPath: $0) })
        try await withNIOHTTPTransport { transport in
            let login = try await MCPLogin.discover(issuer: issuer, clientID: clientID, resource: endpoint, keychain: keychain, transport: transport)
            if try keychain.load(login.key) == nil {
                try await login.logIn(scopes: scope.isEmpty ? nil : scope, browser: HeadlessWhenNeeded(transport: transport)) { url in
                    print("Opening \(url) in your browser (open it yourself if nothing happens)…")
                }
                print("Logged in at \(login.relyingParty.provider.issuer); kept in \(keychain.directory.path) as \(login.key).")
            }
            let toolbox = MCPToolbox(endpoint: endpoint, session: login.session())
            let tools = try await toolbox.listTools()
            print("\(tools.count) tool(s) at \(endpoint):")
            for tool in tools { print("- \(tool.name): \(tool.description ?? "")") }
            if let call {
                print("\(call) → \(try await toolbox.callTool(call))")
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
