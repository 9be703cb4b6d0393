public import Foundation
public import OIDC

extension TestBrowser {
    /// This browser as a login's `BrowserLauncher` (`LoopbackLogin.browser`): it opens the start URL
    /// in the background, as a person's browser does, and the login goes on waiting for the
    /// callback; how the visit ends is the login's result (its page, its error), not the launcher's.
    ///
    /// ```swift
    /// var login = rp.loopbackLogin(scopes: ["openid"])
    /// login.browser = TestBrowser().launcher
    /// let stored = try await login.runLogin()
    /// ```
    public var launcher: Launcher { Launcher(browser: self) }

    /// A ``TestBrowser`` that a login opens (``TestBrowser/launcher``).
    public struct Launcher: BrowserLauncher {
        /// The browser that visits the URL.
        public let browser: TestBrowser

        /// Starts the visit of `url` and returns at once.
        public func open(_ url: URL) async throws(OIDCError) {
            let browser = browser
            Task { _ = try? await browser.open(url) }
        }
    }
}
