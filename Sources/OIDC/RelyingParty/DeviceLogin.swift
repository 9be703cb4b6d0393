public import Foundation

/// A login on a device without a usable browser (RFC 8628): the user opens ``verificationURI`` on
/// any other device (a phone) and enters ``userCode``, while this one polls the token endpoint.
/// Made by ``RelyingParty/deviceLogin(scopes:parameters:)``.
///
/// ```swift
/// let login = try await rp.deviceLogin()
/// print("Open \(login.verificationURI) and enter \(login.userCode)")
/// let kept = try await login.waitForLogin()
/// ```
///
/// ``waitForLogin()`` polls at the provider's interval, plus a margin (a tenth of it, at least one
/// second) so that a clock that runs fast (seen under WSL) does not earn `slow_down` after
/// `slow_down`; `slow_down` adds 5 s to this and every later poll (or takes the provider's new
/// interval when it sends one); `Retry-After` is honoured; it stops at `expires_in` by this
/// machine's own clock (`clock`), since some providers never say `expired_token`, or after
/// ``timeout`` when that comes first. (These rules are the library's one poller's, which CIBA's
/// poll mode shares.)
public struct DeviceLogin: Sendable {
    /// What happens while ``waitForLogin()`` waits, for a progress display.
    public enum Progress: Sendable {
        /// The provider said `authorization_pending`: nobody has approved yet.
        case pending
        /// The provider said `slow_down`: polls now come every `interval`.
        case slowDown(interval: Duration)
        /// A poll failed for a transient reason (network, 5xx); the next one is tried after `after`.
        case retrying(OIDCError, after: Duration)
    }

    /// The client and provider of this login.
    public let relyingParty: RelyingParty
    /// The provider's answer to the device authorization request.
    public let authorization: DeviceAuthorization
    /// Told what happens while the login waits.
    public var onProgress: @Sendable (Progress) -> Void = { _ in }
    /// How long to wait for the user's approval: until the codes expire (``expiresAt``) when `nil`,
    /// the default; a shorter wait ends with ``OIDCError/Code/loginTimedOut`` too.
    public var timeout: Duration?
    /// The time the wait reads and sleeps on: the system's, dated as the relying party's
    /// ``TokenClient/now`` dates, by default.
    package var clock: LoginClock
    /// The DPoP key the tokens will be bound to, when ``RelyingParty/Configuration/dpop`` is on: every poll
    /// carries a proof of it, and the login keeps it.
    public internal(set) var dpopKey: DPoPKey?

    /// What the user enters at ``verificationURI``.
    public var userCode: String { authorization.userCode }
    /// Where the user goes, on any device.
    public var verificationURI: URL { authorization.verificationURI }
    /// ``verificationURI`` with the code in it, when the provider sends one: for a link or a QR code.
    public var verificationURIComplete: URL? { authorization.verificationURIComplete }
    /// When the codes expire.
    public var expiresAt: Date { authorization.expiresAt }
    /// The provider's polling interval.
    @available(*, deprecated, message: "read authorization.interval (the polls come at it plus a margin)")
    public var interval: Duration { authorization.interval }

    /// A device login from a device authorization the caller requested itself.
    public init(relyingParty: RelyingParty, authorization: DeviceAuthorization) {
        self.relyingParty = relyingParty
        self.authorization = authorization
        self.clock = LoginClock(now: relyingParty.tokenClient.now)
    }

    /// Polls until the user approves, and returns the login to keep (``RelyingParty/save(_:in:as:)``,
    /// a ``TokenStore``): when the provider sent an ID token, it is verified (signature, issuer,
    /// audience, times, `at_hash`; there is no nonce in this grant), its reading is the login's
    /// ``StoredLogin/idToken`` and its `sub` the login's ``StoredLogin/subject``; when it sent
    /// none, which RFC 8628 allows (django-oauth-toolkit 3.4 sends none even for `openid`), the
    /// login is kept without a subject, as a client's own tokens are. Nobody is then named: the
    /// access token alone says who, to the resource servers.
    ///
    /// - Throws: ``OIDCError/Code/loginTimedOut`` when the codes expire first (`expired_token`, or
    ///   `expires_in` by this clock: the message names a fast clock when `slow_down` kept coming; or
    ///   at ``timeout``);
    ///   ``OIDCError/Code/providerError`` for `access_denied` and every other refusal;
    ///   ``OIDCError/Code/cancelled`` when the task is cancelled; a transient error after three
    ///   failed polls in a row without a `Retry-After` (one with it is waited for, until the codes
    ///   expire); the ID token's checks.
    public func waitForLogin() async throws(OIDCError) -> StoredLogin {
        // A plain OAuth server (found from a resource) was asked for no ID token: one that comes
        // anyway names nobody, as in its browser logins.
        try await relyingParty.identity.complete(try await approvedTokens(), at: relyingParty, dpopKey: dpopKey) { tokens, idToken throws(OIDCError) in
            try await verified(tokens, idToken: idToken)
        }
    }

    /// Polls as ``waitForLogin()`` does, and returns the login as a ``VerifiedLogin``: a provider
    /// whose device grant sends no ID token is refused (`missingParameter`, the tokens dropped).
    @available(*, deprecated, renamed: "waitForLogin()", message: "waitForLogin returns the login to keep; its idToken is the verified ID token, nil when the provider sent none")
    public func waitForTokens() async throws(OIDCError) -> VerifiedLogin {
        let tokens = try await approvedTokens()
        guard let idToken = tokens.idToken else {
            throw OIDCError(
                .missingParameter,
                "The provider's device grant sent no ID token (RFC 8628 promises none), so there is no verified login to return; DeviceLogin.waitForLogin() keeps such a login without a subject."
            )
        }
        return try await verified(tokens, idToken: idToken)
    }

    /// `tokens` as a verified login, once their ID token passes the checks of this grant (no nonce).
    private func verified(_ tokens: TokenSet, idToken: Secret) async throws(OIDCError) -> VerifiedLogin {
        try await relyingParty.verifiedWithoutFrontChannel(tokens, idToken: idToken, dpopKey: dpopKey, now: clock.now())
    }

    /// Polls until the user approves, or the codes expire, or ``timeout``: the tokens.
    private func approvedTokens() async throws(OIDCError) -> TokenSet {
        let client = relyingParty.tokenClient(proving: dpopKey)
        // The keys that would verify an ID token: a provider without them is refused before the
        // wait (a plain OAuth server's logins need none).
        try relyingParty.identity.checkReady(relyingParty)
        let poller = GrantPoller(
            interval: authorization.interval, expiresAt: authorization.expiresAt, timeout: timeout, clock: clock, onProgress: onProgress)
        return try await poller.tokens(polling: { () async throws(OIDCError) -> DevicePoll in try await client.pollDeviceToken(authorization) }, expired: expired)
    }

    /// The error of a wait that ended without tokens, as `expiry` says it ended.
    private func expired(_ expiry: GrantPoller.Expiry) -> OIDCError {
        let slowDowns = expiry.slowDowns, providerError = expiry.providerError
        if expiry.timedOut, let timeout {
            return OIDCError(
                .loginTimedOut, "Nobody approved the device login within \(timeout.components.seconds) s (DeviceLogin.timeout); run the login again.",
                context: ["slowDowns": String(slowDowns)])
        }
        var message = "The device code expired before the sign-in at \(UntrustedText.sanitized(verificationURI.absoluteString, limit: 200)) was approved; run the login again."
        if slowDowns >= GrantPoller.driftSuspicion {
            message += " The provider asked to slow down \(slowDowns) times although every poll waited the interval it asked for: this machine's clock may run fast (seen under WSL, where `wsl --shutdown` resets it)."
        }
        return OIDCError(.loginTimedOut, message, context: ["slowDowns": String(slowDowns)], providerError: providerError)
    }
}

extension RelyingParty {
    /// Starts a login for a device without a usable browser (RFC 8628): the device authorization
    /// request, with PKCE S256 when the provider names S256 among its methods. Show the user
    /// ``DeviceLogin/verificationURI`` and ``DeviceLogin/userCode``, then call
    /// ``DeviceLogin/waitForLogin()``.
    ///
    /// - Parameters:
    ///   - scopes: the scope values; the provider configuration's default ones when `nil`. `openid`
    ///     is always asked for (put first when missing): the login verifies the ID token the
    ///     provider sends (RFC 8628 promises none; ``DeviceLogin/waitForLogin()`` keeps a login without one).
    ///     At a plain OAuth server (``DiscoveredResource/isPlainOAuth``) exactly `scopes` are asked
    ///     for, no `jwks_uri` is needed, and ``DeviceLogin/waitForLogin()`` keeps the login without a subject.
    ///   - parameters: more parameters of the request.
    /// - Throws: `profileViolation` under the security profile ``SecurityProfile/fapi2`` (the profile
    ///   holds the code flow); `missingParameter` when the provider publishes no `jwks_uri` (but
    ///   at a plain OAuth server);
    ///   `invalidArgument` when it has no device authorization endpoint; what
    ///   ``TokenClient/requestDeviceAuthorization(scopes:parameters:pkce:)`` throws.
    public func deviceLogin(scopes: [String]? = nil, parameters: [OAuthParameter] = []) async throws(OIDCError) -> DeviceLogin {
        try configuration.securityProfile.checkDeviceFlow()
        // A plain OAuth server (found from a resource) gets exactly the scopes asked, and its
        // logins need no keys: no ID token comes.
        try identity.checkReady(self)
        let dpopKey = try newLoginDPoPKey()
        let asked = scopes ?? provider.defaultScopes
        let pkce = provider.codeChallengeMethodsSupported.contains(PKCE.method) ? try PKCE.generate() : nil
        let authorization = try await tokenClient.requestDeviceAuthorization(
            scopes: identity.scopes(asked), parameters: parameters, pkce: pkce
        )
        var login = DeviceLogin(relyingParty: self, authorization: authorization)
        login.dpopKey = dpopKey
        return login
    }
}
