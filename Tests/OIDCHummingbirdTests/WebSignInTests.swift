import Foundation
import Hummingbird
import OIDC
import OIDCHummingbird
import OIDCResourceServer
import OIDCTestSupport
import OIDCTesting
import Testing

/// Web sign-in in a Hummingbird app, over real loopback HTTP against TestProvider, with a client
/// that keeps cookies as a browser does: sign in, reload, refresh, sign out, back-channel logout,
/// and the refusals (a forged callback, a logout without the CSRF token).
@Suite("OIDCHummingbird: web sign-in")
struct WebSignInTests {
    static let secret = "web-app-secret-0123456789abcdef"

    /// The app: the user's program (the lines an app writes), on a free port.
    /// This app's clock: the relying party dates the tokens it gets by it, so a test moves it on to
    /// expire them.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var offset: TimeInterval = 0
        var now: Date { lock.withLock { Date().addingTimeInterval(offset) } }
        func advance(_ seconds: TimeInterval) { lock.withLock { offset += seconds } }
    }

    /// `loginPage`: the provider shows its sign-in page (a person clicks "Sign in") instead of
    /// signing the test user in at once.
    static func withApp(
        clock: Clock = Clock(), loginPage: Bool = false, _ body: (TestProvider, String, WebSignIn, CookieBrowser) async throws -> Void
    ) async throws {
        try await withRelyingParty(clock: clock, loginPage: loginPage) { provider, rp in
            try await serveApp(rp, backChannelLogout: true) { base, signIn in try await body(provider, base, signIn, CookieBrowser()) }
        }
    }

    /// TestProvider with the web app's client, and the app's relying party, on `clock`.
    static func withRelyingParty(clock: Clock, loginPage: Bool = false, _ body: (TestProvider, RelyingParty) async throws -> Void) async throws {
        var configuration = TestProvider.Configuration()
        if loginPage { configuration.authorizeBehaviour = .loginPage }
        configuration.clients = [
            {
                var client = TestProvider.Client.confidential(id: "web-app", secret: secret, redirectURIs: ["http://127.0.0.1/auth/callback"])
                client.postLogoutRedirectURIs = ["http://127.0.0.1/signed-out"]
                return client
            }()
        ]
        configuration.accessTokenLifetime = 600
        configuration.idTokenLifetime = 86_400
        try await withTestProvider(configuration) { provider in
            let discovered = try await RelyingParty.discover(issuer: provider.issuer, clientID: "web-app", clientSecret: Secret(secret))
            let rp = RelyingParty(
                tokenClient: TokenClient(provider: discovered.provider, clientID: "web-app", clientSecret: Secret(secret), transport: NIOHTTPTransport.shared, now: { clock.now }),
                keys: discovered.keys)
            try await body(provider, rp)
        }
    }

    /// The app of `rp` (a page at `/` for the signed-in user, `/signed-out`), its sessions in
    /// `sessions`, on a free port of 127.0.0.1, while `body` runs with its base URL.
    static func serveApp(
        _ rp: RelyingParty, sessions: any TokenStore = InMemoryTokenStore(), backChannelLogout: Bool, _ body: (String, WebSignIn) async throws -> Void
    ) async throws {
        let port = try freePort()
        let base = "http://127.0.0.1:\(port)"
        var signIn = try WebSignIn(relyingParty: rp, redirectURI: try #require(URL(string: base + "/auth/callback")), sessions: sessions)
        signIn.postLogoutRedirectURI = URL(string: base + "/signed-out")
        if backChannelLogout {
            signIn.backChannelLogout = BackChannelLogoutEndpoint(
                verifier: LogoutTokenVerifier(issuer: rp.provider.issuer, clientID: rp.clientID, replayStore: InMemoryReplayStore()),
                keys: try #require(rp.keys))
        }
        let router = Router(context: BasicSignInRequestContext.self)
        signIn.addRoutes(to: router)
        router.get("signed-out") { _, _ in "signed out" }
        router.group().add(middleware: signIn.requireSignIn()).get("/") { _, context in
            let user = try context.requireSignedIn()
            return HTMLPage("Hello, \(WebSignIn.escaped(user.subject ?? ""))" + user.logoutForm())
        }
        try await serve(router, port: port) { _ in try await body(base, signIn) }
    }

    @Test("sign in: the provider, the callback, back to the page asked for; cookies HttpOnly and SameSite=Lax (not Secure on loopback); a reload needs no provider")
    func signIn() async throws {
        try await Self.withApp { provider, base, signIn, browser in
            let first = try await browser.open(base + "/")
            #expect(first.status == 200, "\(first.body)")
            #expect(first.body.contains("Hello, test-user"))
            #expect(first.history.contains { $0.hasPrefix(provider.issuer + "/authorize") })
            let session = try #require(await browser.setCookies.first { $0.hasPrefix(signIn.sessionCookie + "=") && !$0.hasPrefix(signIn.sessionCookie + "=;") })
            #expect(session.contains("HttpOnly") && session.contains("SameSite=Lax") && !session.contains("Secure"))
            #expect(await provider.grantCount("authorization_code") == 1)
            #expect(await browser.setCookies.count >= 3)
            let reload = try await browser.open(base + "/")
            #expect(reload.status == 200 && reload.history.count == 1)
            #expect(reload.headers["Cache-Control"] == "no-store")
        }
    }

    @Test("an expired access token is refreshed on the next page (once), and the page shows")
    func refresh() async throws {
        let clock = Clock()
        try await Self.withApp(clock: clock) { provider, base, _, browser in
            _ = try await browser.open(base + "/")
            let refreshes = await provider.grantCount("refresh_token")
            #expect(refreshes == 0)
            clock.advance(601)  // the access token (600 s) has expired
            let again = try await browser.open(base + "/")
            #expect(again.status == 200 && again.body.contains("Hello, test-user"))
            let after = await provider.grantCount("refresh_token")
            #expect(after == refreshes + 1, "\(refreshes) then \(after)")
            _ = try await browser.open(base + "/")
            #expect(await provider.grantCount("refresh_token") == after, "the refreshed token serves the next page")
        }
    }

    @Test("sign out by POST with the CSRF token: the session ends, the provider's end-session endpoint, then back; without the token: 403 and still signed in")
    func signOut() async throws {
        try await Self.withApp { provider, base, signIn, browser in
            let page = try await browser.open(base + "/")
            let csrf = try #require(page.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
            let forged = try await browser.post(base + "/auth/logout", form: "csrf=wrong")
            #expect(forged.status == 403)
            let none = try await browser.post(base + "/auth/logout", form: "")
            #expect(none.status == 403)
            #expect(try await browser.open(base + "/").history.count == 1, "still signed in")
            let out = try await browser.post(base + "/auth/logout", form: "csrf=" + String(csrf))
            #expect(out.history.contains { $0.hasPrefix(provider.endSessionEndpoint) }, "\(out.history)")
            #expect(out.body == "signed out", "\(out.status) \(out.body)")
            let after = try await browser.open(base + "/", followRedirects: false)
            #expect(after.status == 302 && after.headers["Location"]?.hasPrefix(signIn.loginPath + "?return=") == true)
        }
    }

    @Test("a callback that is not this browser's login is refused: no login cookie, or another state; the real login still completes")
    func forgedCallback() async throws {
        try await Self.withApp { _, base, _, browser in
            let bare = try await CookieBrowser().open(base + "/auth/callback?code=stolen&state=guessed")
            #expect(bare.status == 400)
            // This browser starts a login, an attacker's callback with another state comes first.
            let start = try await browser.open(base + "/auth/login?return=/", followRedirects: false)
            let authorize = try #require(start.headers["Location"])
            let forged = try await browser.open(base + "/auth/callback?code=stolen&state=guessed")
            #expect(forged.status == 400)
            let real = try await browser.open(authorize)
            #expect(real.status == 200 && real.body.contains("Hello, test-user"), "\(real.status) \(real.body)")
        }
    }

    @Test("back-channel logout: the provider's logout token for the user's session ends it; the next page goes to sign-in")
    func backChannelLogout() async throws {
        try await Self.withApp { provider, base, signIn, browser in
            _ = try await browser.open(base + "/")
            let store = try #require(signIn.sessions as? InMemoryTokenStore)
            let key = try #require(await store.keys.first)
            let login = try #require(await store.load(key))
            let token = try await provider.logoutToken(TestProvider.LogoutTokenContents(for: login))
            let answer = try await CookieBrowser().post(base + "/auth/backchannel-logout", form: "logout_token=" + token)
            #expect(answer.status == 200)
            let after = try await browser.open(base + "/", followRedirects: false)
            #expect(after.status == 302, "\(after.status)")
            let replayed = try await CookieBrowser().post(base + "/auth/backchannel-logout", form: "logout_token=" + token)
            #expect(replayed.status == 400)
        }
    }

    @Test("OIDCTesting's TestBrowser with a CookieJar: signed in by way of the provider, the session cookie kept for the host, a reload without the provider, sign-out by post")
    func testBrowserKeepsTheAppsCookies() async throws {
        try await Self.withApp { provider, base, signIn, _ in
            let jar = CookieJar()
            let browser = TestBrowser(cookies: jar, submitsForms: false)
            let page = try await browser.open(try #require(URL(string: base + "/")))
            #expect(page.status == 200 && page.body.contains("Hello, test-user"), "\(page.status) \(page.body)")
            #expect(page.history.contains { $0.absoluteString.hasPrefix(provider.issuer + "/authorize") })
            #expect(jar.names(for: "127.0.0.1") == [signIn.sessionCookie], "the login cookie is gone, the session's kept")
            let reload = try await browser.open(try #require(URL(string: base + "/")))
            #expect(reload.history.count == 1)
            let csrf = try #require(page.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
            let out = try await browser.post(try #require(URL(string: base + "/auth/logout")), form: ["csrf": String(csrf)])
            #expect(out.body == "signed out" && jar.names(for: "127.0.0.1").isEmpty, "\(out.body)")
        }
    }

    @Test("the page to go back to is kept whatever it holds (a comma, `;Domain=`): never in a Set-Cookie line as written, and the browser lands on it")
    func returnPathWithCookieSyntax() async throws {
        try await Self.withApp { _, base, _, browser in
            let page = try await browser.open(base + "/?a=1,2")
            #expect(page.status == 200 && page.body.contains("Hello, test-user"), "\(page.status) \(page.body)")
            #expect(page.history.last == base + "/?a=1,2", "\(page.history)")
            let start = try await CookieBrowser().open(base + "/auth/login?return=/x%3BDomain%3Devil.example%2C%22y", followRedirects: false)
            #expect(start.status == 302)
            let cookies = start.headers.values("Set-Cookie")
            #expect(cookies.count == 2 && cookies.allSatisfy { !$0.contains("evil") && !$0.contains(",") }, "\(cookies)")
        }
    }

    @Test("sign-out from another site: Sec-Fetch-Site cross-site is 403, no session cookie a redirect to the signed-out page, neither touching a cookie; a malformed form is 403, and the app lives on")
    func crossSiteAndMalformedSignOut() async throws {
        try await Self.withApp { _, base, signIn, browser in
            let page = try await browser.open(base + "/")
            let csrf = try #require(page.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
            let elsewhere = try await CookieBrowser().post(base + "/auth/logout", form: "csrf=" + String(csrf), followRedirects: false)
            #expect(elsewhere.status == 303 && elsewhere.headers["Location"] == signIn.signedOutPath, "\(elsewhere.status)")
            #expect(elsewhere.headers.values("Set-Cookie").isEmpty)
            let crossSite = try await browser.post(base + "/auth/logout", form: "csrf=" + String(csrf), headers: ["Sec-Fetch-Site": "cross-site"])
            #expect(crossSite.status == 403 && crossSite.headers.values("Set-Cookie").isEmpty)
            for form in ["csrf=%", "csrf=%zz", "csrf=" + String(csrf) + "&csrf=" + String(csrf)] {
                let malformed = try await browser.post(base + "/auth/logout", form: form)
                #expect(malformed.status == 403, "\(form): \(malformed.status)")
            }
            let still = try await browser.open(base + "/")
            #expect(still.status == 200 && still.history.count == 1, "still signed in")
            #expect(await browser.cookies[signIn.sessionCookie] != nil)
        }
    }

    @Test("a session older than sessionLifetime ends on the server too: the next page signs in anew, whatever the tokens say")
    func sessionLifetime() async throws {
        let clock = Clock()
        try await Self.withApp(clock: clock) { _, base, signIn, browser in
            _ = try await browser.open(base + "/")
            let store = try #require(signIn.sessions as? InMemoryTokenStore)
            #expect(await store.keys.count == 1)
            clock.advance(30 * 86_400 + 1)
            // The app's clock is a month on, the provider's is not: only where the browser goes counts here.
            let again = try await browser.open(base + "/", followRedirects: false)
            #expect(again.status == 302 && again.headers["Location"]?.hasPrefix(signIn.loginPath + "?return=") == true, "\(again.status)")
            #expect(await store.keys.isEmpty, "the session is gone from the store")
        }
    }

    @Test("a refused refresh (invalid_grant) ends the session and sends the browser to sign in; a provider that is down keeps it (503, then served once it is back)")
    func refusedRefresh() async throws {
        let clock = Clock()
        try await Self.withApp(clock: clock) { provider, base, signIn, browser in
            _ = try await browser.open(base + "/")
            let store = try #require(signIn.sessions as? InMemoryTokenStore)
            clock.advance(601)  // the access token (600 s) has expired
            await provider.failNextTokenRequests(1, with: .serviceUnavailable)
            let down = try await browser.open(base + "/", followRedirects: false)
            #expect(down.status == 503 && down.body.contains("could not be renewed"), "\(down.status) \(down.body)")
            #expect(await store.keys.count == 1, "a provider that is down ends no session")
            let back = try await browser.open(base + "/", followRedirects: false)
            #expect(back.status == 200 && back.body.contains("Hello, test-user"), "\(back.status)")

            clock.advance(601)
            await provider.failNextTokenRequests(1, with: .invalidGrant)
            let refused = try await browser.open(base + "/", followRedirects: false)
            #expect(refused.status == 302 && refused.headers["Location"]?.hasPrefix(signIn.loginPath + "?return=") == true, "\(refused.status)")
            #expect(await store.keys.isEmpty, "the refused refresh ended the session")
        }
    }
}
