import ArgumentParser
import Foundation
import OIDC
import OIDCTesting
import TerminalLogin

@main
struct TerminalLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "terminal-login",
        abstract: "Logs you in through the browser, keeps the login in a FileKeychain, and calls an API with it.",
        discussion: """
            With --demo, a provider is started on 127.0.0.1 first (OIDCTesting's TestProvider); without a \
            browser, the demo signs in on its page over HTTP by itself and says so.
            """
    )

    @Option(help: "The OpenID provider's issuer URL (discovery at /.well-known/openid-configuration).")
    var issuer: String?

    @Option(help: "Your client id, registered as a public client with the redirect URI http://127.0.0.1/callback.")
    var clientID: String?

    @Option(help: "The API to call with the access token after the login.")
    var api: String?

    @Flag(help: "Start a local provider and log in to it.")
    var demo = false

    @Option(help: "Where the login is kept (default: $XDG_STATE_HOME/oidc or ~/.local/state/oidc).")
    var store: String?

    func validate() throws {
        if !demo, issuer == nil || clientID == nil || api == nil {
            throw ValidationError("Give --issuer, --client-id and --api, or --demo.")
        }
    }

    func run() async throws {
        let keychain = try FileKeychain(directory: store.map { URL(fileURLWithPath: $0) })
        try await withNIOHTTPTransport { transport in
            if demo {
                try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
                    print("A provider is running at \(provider.issuer) (signs in \(await provider.user.subject)).")
                    let login = try await TerminalLogin.discover(issuer: provider.issuer, clientID: "test-client", keychain: keychain, transport: transport)
                    try await run(login, api: provider.protectedResourceURL, browser: DemoBrowser(transport: transport))
                }
            } else {
                let login = try await TerminalLogin.discover(issuer: issuer!, clientID: clientID!, keychain: keychain, transport: transport)
                try await run(login, api: api!, browser: SystemBrowser())
            }
        }
    }

    private func run(_ terminal: TerminalLogin, api: String, browser: any BrowserLauncher) async throws {
        guard let apiURL = URL(string: api) else { throw ValidationError("--api is not a URL.") }
        let login = try await terminal.logIn(browser: browser) { url in
            print("Opening \(url) in your browser (open it yourself if nothing happens)…")
        }
        print("Logged in as \(login.subject ?? "?") at \(login.issuer); kept in \(terminal.keychain.directory.path) as \(terminal.key).")
        let (status, body) = try await terminal.call(apiURL)
        print("GET \(apiURL) → \(status)\n\(body)")
    }
}

/// The system browser when there is one; otherwise OIDCTesting's `TestBrowser`, which signs in
/// on the demo provider's page over HTTP as a person would click "Sign in".
struct DemoBrowser: BrowserLauncher {
    let transport: any HTTPTransport

    func open(_ url: URL) async throws(OIDCError) {
        let system = SystemBrowser()
        if system.isAvailable {
            try await system.open(url)
            return
        }
        print("No browser here: signing in on the demo provider's page over HTTP.")
        let browser = TestBrowser(transport: transport)
        Task { _ = try? await browser.open(url) }
    }
}
