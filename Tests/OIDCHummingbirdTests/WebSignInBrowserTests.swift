import Foundation
import OIDC
import OIDCHummingbird
import OIDCTestSupport
import OIDCTesting
import Testing

/// Web sign-in as a person sees it: headless Chromium signs in at TestProvider's sign-in page,
/// reloads, is refreshed after expiry, signs out with the app's button, and is sent back to sign-in
/// after a back-channel logout; a forged callback and a sign-out without the CSRF token are refused.
/// Every check is a `#require`: a failure throws, and the browser keeps a screenshot and the page
/// source (HeadlessChromium.artifacts).
@Suite(
    "OIDCHummingbird: web sign-in in headless Chromium",
    .enabled(if: HeadlessChromium.driver != nil, "set OIDC_CHROMEDRIVER (make test-package does; scripts/install-deps.sh test installs chromium-driver)"))
struct WebSignInBrowserTests {
    /// Clicks "Sign in" on the provider's page and waits for the app's page `path`.
    static func signIn(_ browser: HeadlessChromium, _ provider: TestProvider, back url: String) async throws {
        try await browser.wait(for: "the provider's sign-in page") { try await $0.title() == "Sign in to the test provider" }
        try #require(try await browser.url().hasPrefix(provider.issuer + "/authorize"))
        try await browser.click("button[value=sign_in]")
        try await browser.wait(forURL: url)
        let page = try await browser.text()
        try #require(page.contains("Hello, test-user"), "\(page)")
    }

    @Test("sign in at the provider's page, reload, expiry and refresh, sign-outs without the CSRF token and from another site refused, sign out with the app's button")
    func signInRefreshSignOut() async throws {
        let clock = WebSignInTests.Clock()
        try await WebSignInTests.withApp(clock: clock, loginPage: true) { provider, base, signIn, _ in
            try await HeadlessChromium.with("web-sign-in-journey") { browser in
                try await browser.open(base + "/")
                try await Self.signIn(browser, provider, back: base + "/")
                let cookies = try await browser.cookies()
                let session = try #require(cookies.first { $0.name == signIn.sessionCookie }, "\(cookies.map(\.name))")
                try #require(session.httpOnly && session.sameSite == "Lax" && !session.secure)

                try await browser.reload()
                try #require(try await browser.text().contains("Hello, test-user"))
                try #require(await provider.grantCount("authorization_code") == 1, "a reload needs no new sign-in")

                clock.advance(601)  // the access token (600 s) has expired
                try await browser.reload()
                try #require(try await browser.text().contains("Hello, test-user"))
                try #require(await provider.grantCount("refresh_token") == 1)

                // A sign-out from another page (no CSRF token): refused, still signed in.
                try await browser.run(
                    """
                    const form = document.createElement('form'); form.method = 'post'; form.action = arguments[0];
                    document.body.appendChild(form); form.submit();
                    """, [base + "/auth/logout"])
                try await browser.wait(for: "the refusal") { try await $0.text().contains("did not come from this app's page") }
                try await browser.open(base + "/")
                try #require(try await browser.text().contains("Hello, test-user"))
                // The same from another site (localhost is not 127.0.0.1's site): the Lax cookie stays
                // home, the app refuses, the user stays signed in.
                let port = try #require(URL(string: base)?.port)
                try await browser.open("http://localhost:\(port)/signed-out")
                try await browser.run(
                    """
                    const form = document.createElement('form'); form.method = 'post'; form.action = arguments[0];
                    document.body.appendChild(form); form.submit();
                    """, [base + "/auth/logout"])
                try await browser.wait(for: "the cross-site refusal") { try await $0.text().contains("came from another site") }
                try await browser.open(base + "/")
                try #require(try await browser.text().contains("Hello, test-user"))

                try await browser.click("form[action='/auth/logout'] button")
                try await browser.wait(forURL: base + "/signed-out")
                try #require(try await browser.text() == "signed out")
                try #require(try await browser.cookies().contains { $0.name == signIn.sessionCookie } == false)
                try await browser.open(base + "/")
                try await browser.wait(for: "the provider's sign-in page again") { try await $0.title() == "Sign in to the test provider" }
            }
        }
    }

    @Test("a forged callback is refused and the real login still completes; a back-channel logout sends the browser back to sign-in")
    func forgedCallbackAndBackChannelLogout() async throws {
        try await WebSignInTests.withApp(loginPage: true) { provider, base, signIn, _ in
            try await HeadlessChromium.with("web-sign-in-refusals") { browser in
                try await browser.open(base + "/auth/login?return=/")
                try await browser.wait(for: "the provider's sign-in page") { try await $0.title() == "Sign in to the test provider" }
                try await browser.open(base + "/auth/callback?code=stolen&state=guessed")
                try #require(try await browser.text().contains("not started in this browser"))
                try await browser.back()
                try await Self.signIn(browser, provider, back: base + "/")

                let store = try #require(signIn.sessions as? InMemoryTokenStore)
                let key = try #require(await store.keys.first)
                let login = try #require(await store.load(key))
                let token = try await provider.logoutToken(TestProvider.LogoutTokenContents(for: login))
                let answer = try await CookieBrowser().post(base + "/auth/backchannel-logout", form: "logout_token=" + token)
                try #require(answer.status == 200)
                try await browser.reload()
                try await browser.wait(for: "the provider's sign-in page after the logout") { try await $0.title() == "Sign in to the test provider" }
            }
        }
    }

    @Test(
        "against django-oauth-toolkit: its login page, back signed in, a reload, sign-out ends its session too",
        .enabled(if: ProcessInfo.processInfo.environment["OIDC_DOT_WEB_CLIENT_ID"] != nil, "set the OIDC_DOT_* variables (scripts/dot-provider.sh start prints them)"))
    func djangoOAuthToolkit() async throws {
        let environment = ProcessInfo.processInfo.environment
        let issuer = try #require(environment["OIDC_DOT_ISSUER"])
        let secret = try String(contentsOfFile: try #require(environment["OIDC_DOT_WEB_CLIENT_SECRET_FILE"]), encoding: .utf8)
        let password = try String(contentsOfFile: try #require(environment["OIDC_DOT_PASSWORD_FILE"]), encoding: .utf8)
        let rp = try await RelyingParty.discover(
            issuer: issuer, clientID: try #require(environment["OIDC_DOT_WEB_CLIENT_ID"]),
            clientSecret: Secret(secret.trimmingCharacters(in: .whitespacesAndNewlines)))
        try await WebSignInTests.serveApp(rp, backChannelLogout: false) { base, _ in
            try await HeadlessChromium.with("web-sign-in-django-oauth-toolkit") { browser in
                try await browser.open(base + "/")
                try await browser.wait(for: "django-oauth-toolkit's login page") { try await $0.title() == "Log in" }
                try await browser.type(try #require(environment["OIDC_DOT_USERNAME"]), into: "#id_username")
                try await browser.type(password.trimmingCharacters(in: .whitespacesAndNewlines), into: "#id_password")
                try await browser.click("button[type=submit]")
                try await browser.wait(forURL: base + "/")
                try #require(try await browser.text().hasPrefix("Hello, "))
                try await browser.reload()
                try #require(try await browser.text().hasPrefix("Hello, "))

                try await browser.click("form[action='/auth/logout'] button")
                try await browser.wait(forURL: base + "/signed-out")
                try await browser.open(base + "/")
                try await browser.wait(for: "django-oauth-toolkit's login page again") { try await $0.title() == "Log in" }
            }
        }
    }
}
