import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import OIDC
import OIDCHummingbird
import OIDCTesting
import WebApp

/// `web-sign-in --demo`: OIDCTesting's provider on 127.0.0.1, the app beside it, and a browser
/// (OIDCTesting's `TestBrowser`, keeping the app's cookies) that signs in, reloads, is refused a
/// forged sign-out and signs out. Each step checks what it expects, so the demo fails when the app
/// answers otherwise.
public enum Demo {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    static let secret = "web-sign-in-demo-secret-0123456789"

    /// Runs the demo, telling `say` each step.
    public static func run(_ say: @Sendable (String) -> Void = { print($0) }) async throws {
        var client = TestProvider.Client.confidential(id: "web-app", secret: secret, redirectURIs: ["http://127.0.0.1/auth/callback"])
        client.postLogoutRedirectURIs = ["http://127.0.0.1/signed-out"]
        var configuration = TestProvider.Configuration()
        configuration.clients = [client]
        try await withTestProvider(configuration) { provider in
            let relyingParty = try await RelyingParty.discover(issuer: provider.issuer, clientID: "web-app", clientSecret: Secret(secret))
            let port = try await freePort()
            let base = "http://127.0.0.1:\(port)"
            let router = try WebApp.router(signingInWith: relyingParty, at: URL(string: base)!)
            say("The app on \(base), signing in at the provider \(provider.issuer).")
            try await serve(router, port: port) {
                try await visit(base, provider, say)
            }
        }
    }

    static func visit(_ base: String, _ provider: TestProvider, _ say: @Sendable (String) -> Void) async throws {
        let browser = TestBrowser(cookies: CookieJar(), submitsForms: false)
        func expect(_ step: String, _ visit: TestBrowser.Visit, _ status: Int, _ check: (TestBrowser.Visit) -> Bool = { _ in true }) throws {
            let atProvider = visit.history.contains { $0.absoluteString.hasPrefix(provider.issuer) }
            say("\(step) → \(visit.status) \(visit.url.path)\(atProvider ? " (by way of the provider)" : "")")
            guard visit.status == status, check(visit) else { throw Unexpected(description: "\(step): \(visit.status) \(visit.body.prefix(200))") }
        }
        let page = try await browser.open(URL(string: base + "/")!)
        try expect("1. GET /, signed out: the provider signs the user in", page, 200) { $0.body.contains("Hello, test-user") }
        try expect("2. a reload: the session, no provider", try await browser.open(URL(string: base + "/")!), 200) { $0.history.count == 1 }
        let forged = try await browser.post(URL(string: base + "/auth/logout")!, form: ["csrf": "forged"])
        try expect("3. a sign-out without the page's CSRF token: refused", forged, 403)
        guard let csrf = page.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1 else { throw Unexpected(description: "no sign-out form") }
        let out = try await browser.post(URL(string: base + "/auth/logout")!, form: ["csrf": String(csrf)])
        try expect("4. the page's sign-out button: through the provider's end-session endpoint, back", out, 200) {
            $0.url.path == "/signed-out" && $0.history.contains { $0.absoluteString.hasPrefix(provider.endSessionEndpoint) }
        }
        let again = try await browser.open(URL(string: base + "/")!)
        try expect("5. GET / again: a new sign-in at the provider", again, 200) { $0.history.count > 1 }
    }

    /// A free port of 127.0.0.1 (the app's URL is its redirect URI, so the port is known first).
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        defer { channel.close(promise: nil) }
        return channel.localAddress?.port ?? 0
    }

    /// Serves `router` on 127.0.0.1:`port` while `body` runs.
    static func serve(_ router: Router<BasicSignInRequestContext>, port: Int, _ body: () async throws -> Void) async throws {
        var logger = Logger(label: "web-sign-in")
        logger.logLevel = .critical
        let (running, listening) = AsyncStream.makeStream(of: Void.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { _ in listening.finish() }, logger: logger)
        let server = Task {
            defer { listening.finish() }  // a failed bind must not leave the wait below hanging
            try await app.run()
        }
        defer { server.cancel() }
        for await _ in running {}
        try await body()
    }
}
