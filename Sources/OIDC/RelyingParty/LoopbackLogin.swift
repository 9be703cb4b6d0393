public import Foundation
public import Logging

/// A login from a terminal or a desktop program through the system browser and a loopback redirect
/// (RFC 8252 §7.3): a listener on 127.0.0.1, a new authorization request whose redirect URI leads
/// there, the browser opened at the listener's short start URL, the callback checked, the code
/// exchanged, the ID token verified. Made by ``RelyingParty/loopbackLogin(scopes:)``; set what you
/// need, then ``runLogin(showing:)``.
///
/// ```swift
/// var login = rp.loopbackLogin(scopes: ["openid", "offline_access"])
/// login.timeout = .seconds(300)
/// let kept = try await login.runLogin { url in print("Sign in at \(url)") }
/// try await rp.save(kept, in: store, as: key)
/// ```
public struct LoopbackLogin: Sendable {
    /// What happens during ``runLogin(showing:)``, for a progress display.
    public enum Progress: Sendable {
        /// The browser could not be opened: the URL shown is the way in now.
        case browserFailed(OIDCError)
        /// The provider's callback arrived and passed its checks; the code is being exchanged.
        case callbackReceived
    }

    /// The client and provider of this login.
    public var relyingParty: RelyingParty
    /// The scope values; the provider configuration's default ones when `nil` (`openid` is always
    /// asked for).
    public var scopes: [String]?
    /// Where the listener binds (127.0.0.1 on a port the system chooses, by default), its callback
    /// path and limits.
    public var listener: LoopbackRedirectListener.Configuration
    /// Opens the start URL; `nil` shows it only (``runLogin(showing:)``'s `show`). The user's browser by
    /// default (``SystemBrowser``, which hands it a private page rather than the URL, so the URL is
    /// on no command line). It is told when the login ends (``BrowserLauncher/loginEnded(_:)``).
    public var browser: (any BrowserLauncher)?
    /// How long to wait for the browser to come back: 180 s by default.
    public var timeout: Duration
    /// The time the login reads and sleeps on (the renewal of a start URL that is about to
    /// expire): the system's, dated as the relying party's ``TokenClient/now`` dates, by default.
    package var clock: LoginClock
    /// Sets anything else on the request (`prompt`, `loginHint`, `maxAge`, additional parameters),
    /// or replaces it; its redirect URI must stay the listener's.
    public var configure: @Sendable (inout AuthorizationRequest) throws(OIDCError) -> Void
    /// Told what happens while the login runs.
    public var onProgress: @Sendable (Progress) -> Void
    /// Where the listener logs (requests' method, path and answer; never a query); the relying
    /// party's logger when `nil`.
    public var logger: Logger?

    /// A loopback login with the defaults: 127.0.0.1, the system browser, 180 s.
    package init(for relyingParty: RelyingParty, scopes: [String]? = nil) {
        self.relyingParty = relyingParty
        self.scopes = scopes
        self.listener = LoopbackRedirectListener.Configuration()
        // A resource's registered client names its callback's port: bind that one.
        if let port = relyingParty.protectedResource?.callbackPort, let fixed = try? LoopbackRedirectListener.Endpoint(host: "127.0.0.1", port: port) {
            listener.endpoints = [fixed]
        }
        self.browser = SystemBrowser()
        self.timeout = .seconds(180)
        self.clock = LoginClock(now: relyingParty.tokenClient.now)
        self.configure = { _ in }
        self.onProgress = { _ in }
    }

    /// Runs the login: listener → request → start URL shown (`show`), then opened in the browser →
    /// callback checked → code exchanged → ID token verified (its reading is the login's
    /// ``StoredLogin/idToken``), and the login to keep returned. The listener is closed on every path.
    ///
    /// At a plain OAuth server (a relying party made for a resource whose server publishes no OpenID
    /// metadata, ``DiscoveredResource/isPlainOAuth``) no ID token is asked for or needed: the login is
    /// kept without a subject, as a device login without one is.
    ///
    /// A second request for the start URL during the wait, or within the listener's
    /// ``LoopbackRedirectListener/Configuration/callbackGrace`` after the callback (2 s by default;
    /// a login whose start URL was opened takes that much longer), means another local program may have opened the start URL
    /// first and signed in with its own account: the login is aborted with `startURLReused`
    /// (category `security`) before the code is exchanged, and the browser is shown why.
    ///
    /// - Parameter show: given the start URL (`http://127.0.0.1:PORT/<random>`, short) before the
    ///   browser is asked to open it, so that a user whose browser does not start can open it.
    /// - Throws: `missingParameter` when the provider publishes no `jwks_uri` (before anything is
    ///   started); what ``LoopbackRedirectListener/start(_:logger:)`` throws (`portInUse`, …); a
    ///   callback's checks (`stateMismatch` is never thrown: another request's callback is answered
    ///   and ignored); `startURLReused` when the start URL was opened a second time (nothing is
    ///   exchanged); `loginTimedOut` after ``timeout``; `cancelled` when the task is cancelled;
    ///   what ``RelyingParty/authorizationURL(for:)`` throws (a refused pushed authorization
    ///   request, no pushed authorization request endpoint, a response mode the provider does not
    ///   offer); with ``RelyingParty/Configuration/responseMode`` a JWT one (JARM), what
    ///   ``LoopbackRedirectListener/serve(_:redirectingTo:verifier:keys:)`` says a wait throws (a
    ///   response that fails its verification is ignored, and reported if the login times out); what
    ///   ``RelyingParty/completeLogin(_:for:now:)`` throws (at a plain OAuth server, never for a
    ///   missing ID token or `jwks_uri`).
    public func runLogin(showing show: @Sendable (URL) -> Void = { _ in }) async throws(OIDCError) -> StoredLogin {
        let identity = relyingParty.identity
        return try await perform(showing: show, identity: identity) { request, response throws(OIDCError) in
            try await identity.complete(response, for: request, at: relyingParty)
        }
    }

    /// Runs the login as ``runLogin(showing:)`` does, at an OpenID provider only, and returns it
    /// as a ``VerifiedLogin``.
    @available(*, deprecated, renamed: "runLogin(showing:)", message: "runLogin returns the login to keep; its idToken is the verified ID token")
    public func run(showing show: @Sendable (URL) -> Void = { _ in }) async throws(OIDCError) -> VerifiedLogin {
        try await perform(showing: show, identity: .openID) { request, response throws(OIDCError) in
            try await relyingParty.completeLogin(response, for: request)
        }
    }

    private func perform<Result: Sendable>(
        showing show: @Sendable (URL) -> Void, identity: LoginIdentity,
        complete: (AuthorizationRequest, AuthorizationResponse) async throws(OIDCError) -> Result
    ) async throws(OIDCError) -> Result {
        try identity.checkReady(relyingParty)
        let listener = try await LoopbackRedirectListener.start(self.listener, logger: logger ?? relyingParty.logger)
        var opened: (any BrowserLauncher)?
        do throws(OIDCError) {
            let request = try relyingParty.authorizationRequest(redirectURI: listener.redirectURI, scopes: scopes, configure: configure)
            let target = try await relyingParty.authorizationTarget(for: request)
            let logger = self.logger ?? relyingParty.logger
            if request.responseMode?.isJARM == true {
                // JARM: the listener verifies a callback's signed response before it looks at its state.
                try listener.serve(request, redirectingTo: target.url, verifier: relyingParty.jarmVerifier(for: request), keys: try relyingParty.requireKeys())
            } else {
                try listener.serve(request, redirectingTo: target.url)
            }
            let renewal = target.expiresAt.map { expiresAt in
                Task { [relyingParty, clock] in
                    await Self.renewAuthorizationURL(request, expiresAt: expiresAt, listener: listener, relyingParty, logger: logger, clock: clock)
                }
            }
            defer { renewal?.cancel() }
            show(listener.startURL)
            if let browser {
                opened = browser
                do throws(OIDCError) { try await browser.open(listener.startURL) } catch { onProgress(.browserFailed(error)) }
            }
            let response = try await listener.waitForAuthorization(request, timeout: timeout)
            await opened?.loginEnded(listener.startURL)
            opened = nil
            onProgress(.callbackReceived)
            return try await complete(request, response)
        } catch {
            await opened?.loginEnded(listener.startURL)
            await listener.close()
            if browser == nil, error.code == .loginTimedOut, error.context["startOpened"] == "false" {
                // Shown only, never handed to a browser: advice for the person who was to open it.
                throw LoopbackRedirectListener.timedOutError(redirectURI: listener.redirectURI, timeout: timeout, startOpened: false, byHand: true)
            }
            throw error
        }
    }
}

extension LoopbackLogin {
    /// While nobody has opened the start URL, makes the authorization URL again shortly before it
    /// stops working (a pushed request's URI expires, or a request object by value; a quarter of its
    /// lifetime before, at most 10 s) and points the start URL at the new one: a user who opens the
    /// link late still gets a usable one. Renewals are at least ``minimumRenewalDelay`` (10 s) apart:
    /// a URL that lives less than that is renewed 10 s after it was made, having expired meanwhile
    /// (security review 4, I2: a 1 s lifetime made a push every 0.75 s). Ends once the start URL
    /// has been opened, at cancellation, or when making it fails (the link then stays as it was).
    /// `clock` tells the time and waits (tests pass one they move, or one that records the delay).
    static func renewAuthorizationURL(
        _ request: AuthorizationRequest, expiresAt first: Date, listener: LoopbackRedirectListener, _ relyingParty: RelyingParty,
        logger: Logger?, clock: LoginClock = .system
    ) async {
        var expiresAt = first
        while !Task.isCancelled {
            do { try await clock.sleep(renewalDelay(secondsLeft: expiresAt.timeIntervalSince(clock.now()))) } catch { return }
            do throws(OIDCError) {
                let renewed = try await relyingParty.authorizationTarget(for: request)
                guard try listener.replaceRedirect(for: request, with: renewed.url), let next = renewed.expiresAt else { return }
                logger?.debug("authorization URL renewed before it expired (a pushed request or a request object)")
                expiresAt = next
            } catch {
                logger?.warning("the authorization URL could not be renewed; the sign-in link works until it expires",
                                metadata: .failure(error))
                return
            }
        }
    }
}

extension LoopbackLogin {
    /// The least time between two renewals of the authorization URL: 10 s. A provider whose request
    /// URIs live a second is then pushed to at most every 10 s while the login waits (not every
    /// 0.75 s), and its link may be expired for a while before each renewal.
    static let minimumRenewalDelay = Duration.seconds(10)

    /// How long to wait before renewing a URL that expires in `left` seconds: until a quarter of its
    /// lifetime (at most 10 s) before it expires, and never less than ``minimumRenewalDelay``.
    static func renewalDelay(secondsLeft left: Double) -> Duration {
        let margin = min(10, max(left, 0) / 4)
        let delay = left - margin
        guard delay.isFinite, delay > minimumRenewalDelay.timeInterval else { return minimumRenewalDelay }
        return .milliseconds(Int64(min(delay, 1e9) * 1000))
    }
}

extension RelyingParty {
    /// A login through the system browser and a loopback redirect (RFC 8252), with the defaults
    /// (127.0.0.1, any port, 180 s): set what you need on it, then ``LoopbackLogin/runLogin(showing:)``.
    /// The provider must accept `http://127.0.0.1/callback` on any port.
    public func loopbackLogin(scopes: [String]? = nil) -> LoopbackLogin {
        LoopbackLogin(for: self, scopes: scopes)
    }
}
