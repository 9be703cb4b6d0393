import Foundation
import OIDC
import OIDCTesting
@testable import TerminalLogin
import Testing

/// The example end to end against OIDCTesting's provider over real loopback HTTP: the browser is
/// OIDCTesting's TestBrowser, which clicks "Sign in" on the provider's page.
@Suite("TerminalLogin", .timeLimit(.minutes(1)))
struct TerminalLoginTests {
    struct BackgroundBrowser: BrowserLauncher {
        let transport: any HTTPTransport
        func open(_ url: URL) async throws(OIDCError) {
            let browser = TestBrowser(transport: transport)
            Task { _ = try await browser.open(url) }
        }
    }

    @Test("log in, keep the login in a FileKeychain, call the API, refresh on a 401, log out")
    func wholeJourney() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("terminal-login-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            try await withNIOHTTPTransport { transport in
                let terminal = try await TerminalLogin.discover(
                    issuer: provider.issuer, clientID: "test-client", keychain: try FileKeychain(directory: directory), transport: transport
                )
                let user = await provider.user.subject
                let shown = URLBox()
                let login = try await terminal.logIn(browser: BackgroundBrowser(transport: transport)) { shown.set($0) }
                #expect(login.subject == user)
                #expect(shown.url?.host == "127.0.0.1")

                // A second process (a new keychain value on the same directory) sees the login.
                let reread = try FileKeychain(directory: directory).load(terminal.key)
                #expect(reread?.tokens.accessToken == login.tokens.accessToken)
                let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
                #expect(mode == 0o700)

                let api = try #require(URL(string: provider.protectedResourceURL))
                let first = try await terminal.call(api)
                #expect(first.status == 200)
                #expect(first.body.contains(user))

                // The provider forgets its access tokens: the session refreshes once on the 401 and retries.
                await provider.expireAccessTokens()
                let second = try await terminal.call(api)
                #expect(second.status == 200)
                #expect(await provider.grantCount("refresh_token") == 1)
                let refreshed = try terminal.keychain.load(terminal.key)
                #expect(refreshed?.tokens.accessToken != login.tokens.accessToken)

                try await terminal.logOut(api: api)
                #expect(try terminal.keychain.load(terminal.key) == nil)
                #expect(await provider.requestCount(.revocation) == 1)
            }
        }
    }

    @Test("a login that nobody completes times out and frees the port")
    func timesOut() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("terminal-login-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let terminal = try await TerminalLogin.discover(
                    issuer: provider.issuer, clientID: "test-client", keychain: try FileKeychain(directory: directory), transport: transport
                )
                struct Nowhere: BrowserLauncher { func open(_ url: URL) async throws(OIDCError) {} }
                await #expect(throws: OIDCError.self) {
                    _ = try await terminal.logIn(browser: Nowhere(), timeout: .milliseconds(300))
                }
                #expect(try terminal.keychain.load(terminal.key) == nil)
            }
        }
    }
}

/// The README's library example, as a user would run it: the system browser (`$BROWSER`, here curl
/// following the provider's redirects, which signs in at once, given the start URL itself) and the
/// default `FileKeychain`.
@Suite("The README's example", .serialized, .timeLimit(.minutes(1)))
struct QuickstartTests {
    @Test("signInAndCallAPI logs in and calls the API; callAPIAgain uses the kept login in a later run")
    func readmeExample() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("quickstart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        setenv("XDG_STATE_HOME", state.path, 1)
        setenv("BROWSER", "curl -fsS -o /dev/null -L", 1)
        // curl follows HTTP redirects, not the private page's <meta refresh> that SystemBrowser hands a
        // browser by default: give it the start URL itself, as a URL-forwarding $BROWSER needs too.
        setenv("OIDC_BROWSER_HANDOFF", "url", 1)
        try await withTestProvider { provider in
            let first = try await signInAndCallAPI(issuer: provider.issuer, clientID: "test-client", api: provider.protectedResource)
            #expect(first.status == 200)
            await provider.expireAccessTokens()
            let again = try await callAPIAgain(issuer: provider.issuer, clientID: "test-client", api: provider.protectedResource)
            #expect(again.status == 200)
            #expect(await provider.grantCount("authorization_code") == 1)
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }
}

/// The URL the tool printed, captured from the `show` callback.
final class URLBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: URL?
    var url: URL? { lock.withLock { value } }
    func set(_ url: URL) { lock.withLock { value = url } }
}
