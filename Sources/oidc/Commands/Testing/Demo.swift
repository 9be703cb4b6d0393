import ArgumentParser
import Foundation
import OIDC
import OIDCTesting

/// `oidc demo`: the whole day of a terminal user against the embedded provider, in one command.
struct Demo: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "The whole flow against the embedded test provider: login, verified claims, API call, refresh on 401, logout.",
        discussion: """
            Starts the test provider on 127.0.0.1 and runs the real login: the loopback listener, \
            the provider's sign-in page in your browser (click Sign in), the code exchange with PKCE \
            and the ID-token verification. Without a browser (or with --headless) oidc completes the \
            sign-in page itself, over HTTP, as the demo user, and says so. Then it calls the \
            provider's protected API through the authenticated session, expires the access token to \
            show the refresh on a 401, and logs out (revocation, then the stored login deleted). \
            Nothing is written outside a temporary directory, which is removed at the end.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @Flag(help: "Sign in without a browser: oidc fills in the provider's sign-in page itself.")
    var headless = false

    @Option(help: "The browser command (default: $BROWSER, then xdg-open, wslview under WSL, open on macOS).")
    var browser: String?

    @Option(help: "Seconds to wait for the sign-in.")
    var timeout: Int = 180

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let started = ContinuousClock.now
        try await Interrupt.run { [headless, browser, timeout] in
            var configuration = TestProvider.Configuration(authorizeBehaviour: .loginPage)
            configuration.user.name = "Demo User"
            try await withTestProvider(configuration) { provider in
                try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
                    try await Self.show(provider, transport: transport, store: directory, headless: headless, browser: browser, timeout: timeout)
                }
            }
        }
        Console.error("== done in \(Self.seconds(ContinuousClock.now - started)) s; the provider is stopped and \(directory.path) removed")
    }

    private static func show(
        _ provider: TestProvider, transport: NIOHTTPTransport, store: URL, headless: Bool, browser: String?, timeout: Int
    ) async throws {
        say("1. the embedded provider is up at \(provider.issuer) (discovery, JWKS, PKCE, rotating refresh tokens)")
        let system = SystemBrowser(command: browser)
        let choice: LoginFlow.BrowserChoice
        if !headless, system.isAvailable {
            say("2. log in: your browser opens the provider's sign-in page; click Sign in")
            choice = .system(command: browser)
        } else {
            say("2. log in: no browser here\(headless ? " (--headless)" : ""), so oidc signs in on the provider's page itself, over HTTP, as the demo user")
            choice = .custom(HeadlessUserAgent(transport: transport))
        }
        var profile = Profile()
        profile.issuer = provider.issuer
        profile.clientID = TestProvider.Client.default.id
        profile.scopes = ["openid", "profile", "email", "offline_access"]
        let keychain = try FileKeychain(directory: store, logger: CLILog.logger(.store))
        let key = TokenStoreKey(service: StoreOptions.service, account: "demo")
        let flow = LoginFlow(
            profile: profile, profileName: "demo", clientSecret: nil, timeout: .seconds(timeout), browser: choice, keychain: keychain, key: key
        )
        let outcome = try await flow.run(transport: transport)
        say("3. \(Login.summary(outcome.stored, profile: "demo")); code exchange and storage took \(milliseconds(outcome.callbackToStored)) ms")
        say("   the ID token passed every check (signature, iss, aud, exp, iat, nonce, at_hash); its claims:")
        Console.output(try pretty(Array(outcome.idToken.claims.rawJSON.utf8)))

        let resource = provider.protectedResource
        let session = outcome.relyingParty.session(store: keychain, key: key, allowlist: .default(for: resource))
        let first = try await session.send(HTTPRequest(url: resource))
        say("4. GET \(resource.path) through the session (bearer token for this host only): HTTP \(first.status)")
        Console.output(try pretty(first.body))

        await provider.expireAccessTokens()
        let second = try await session.send(HTTPRequest(url: resource))
        let refreshes = await provider.grantCount("refresh_token")
        say("5. the provider expired the access token: the API answered 401, the session refreshed once (\(refreshes) refresh, rotating refresh token) and retried: HTTP \(second.status)")

        let stale = try await session.validTokens()
        try await session.logout(revoke: true)
        let revocations = await provider.requestCount(.revocation)
        let after = try await transport.send(HTTPRequest(url: resource, headers: ["Authorization": "Bearer \(stale.accessToken.revealedValue)"]))
        let gone = try keychain.load(key) == nil
        say("6. logged out: \(revocations) revocation request (RFC 7009), the stored login \(gone ? "deleted" : "STILL THERE"); the last access token now gets HTTP \(after.status)")
        guard first.status == 200, second.status == 200, refreshes == 1, gone, after.status == 401 else {
            throw OIDCError(.malformedResponse, "The demo did not go as it should (statuses \(first.status), \(second.status), \(after.status); \(refreshes) refreshes).")
        }
    }

    private static func say(_ line: String) { Console.error("== " + line) }

    private static func pretty(_ json: [UInt8]) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(json))
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f", Double(milliseconds(duration)) / 1000)
    }
}

/// The demo's stand-in for a person with a browser: opens the URL in the background and signs in
/// on the provider's page (OIDCTesting's ``TestBrowser``), so the login waits for it as for a person.
struct HeadlessUserAgent: BrowserLauncher {
    let transport: any HTTPTransport

    func open(_ url: URL) async throws(OIDCError) {
        let browser = TestBrowser(transport: transport)
        Task {
            do throws(OIDCError) { _ = try await browser.open(url) } catch {
                Console.error("oidc: the demo's user agent failed: \(error.message)")
            }
        }
    }
}
