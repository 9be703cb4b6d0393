public import Foundation

/// A login the user approves on their own device, with no browser here (OpenID CIBA Core 1.0): the
/// provider reaches the user (a push to their bank's app) by ``BackchannelAuthenticationRequest/loginHint``,
/// shows them ``BackchannelAuthenticationRequest/bindingMessage``, and this client learns the answer
/// by polling the token endpoint (poll mode), or by one token request after the provider's
/// notification (ping mode, ``completeAfterNotification()``). Made by ``RelyingParty/backchannelLogin(_:)``.
///
/// ```swift
/// let login = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: "alice@example.com", bindingMessage: "W4SCT"))
/// print("Approve the sign-in on your phone: \(login.request.bindingMessage ?? "")")
/// let kept = try await login.waitForLogin()
/// ```
///
/// The wait follows the library's one poller (``DeviceLogin``'s rules): no poll sooner than the
/// interval after the last, `slow_down` adding 5 s for the rest of the wait, `authorization_pending`
/// waiting on, the expiry by this machine's clock. The ID token is required and verified as a
/// code-flow login's, without a nonce (none is sent); with `acr_values` asked, its `acr` must be
/// one of them.
public struct BackchannelLogin: Sendable {
    /// The client and provider of this login.
    public let relyingParty: RelyingParty
    /// What was asked.
    public let request: BackchannelAuthenticationRequest
    /// The provider's answer: the request's id (a credential), its expiry and interval.
    public let authentication: BackchannelAuthentication
    /// Told what happens while the login waits.
    public var onProgress: @Sendable (DeviceLogin.Progress) -> Void = { _ in }
    /// How long to wait for the user's approval: until the request expires when `nil`.
    public var timeout: Duration?
    /// The time the wait reads and sleeps on.
    package var clock: LoginClock
    /// The DPoP key the tokens will be bound to, when the relying party binds its tokens.
    public internal(set) var dpopKey: DPoPKey?

    /// When the request expires.
    public var expiresAt: Date { authentication.expiresAt }

    init(relyingParty: RelyingParty, request: BackchannelAuthenticationRequest, authentication: BackchannelAuthentication) {
        self.relyingParty = relyingParty
        self.request = request
        self.authentication = authentication
        self.clock = LoginClock(now: relyingParty.tokenClient.now)
    }

    /// Polls until the user approves (poll mode), and returns the login to keep.
    ///
    /// - Throws: ``OIDCError/Code/providerError`` for `access_denied` and for the provider's
    ///   `expired_token` (the error's ``OIDCError/providerError`` says which);
    ///   ``OIDCError/Code/loginTimedOut`` when the request expires by this machine's clock first, or
    ///   at ``timeout``; ``OIDCError/Code/cancelled``; the ID token's checks.
    public func waitForLogin() async throws(OIDCError) -> StoredLogin {
        let client = relyingParty.tokenClient(proving: dpopKey)
        let poller = GrantPoller(interval: authentication.interval, expiresAt: expiresAt, timeout: timeout, clock: clock, onProgress: onProgress)
        let tokens = try await poller.tokens(
            polling: { () async throws(OIDCError) -> DevicePoll in try await client.pollBackchannelToken(authentication) }, expired: expired)
        return try await completed(tokens)
    }

    /// Ping mode (CIBA Core §10.2): after the provider's notification for this request, one token
    /// request, and the login to keep. A pending answer (the notification came early, or was not
    /// the provider's) is ``OIDCError/Code/providerError`` `authorization_pending`, with nothing kept.
    public func completeAfterNotification() async throws(OIDCError) -> StoredLogin {
        switch try await relyingParty.tokenClient(proving: dpopKey).pollBackchannelToken(authentication) {
        case .tokens(let tokens):
            return try await completed(tokens)
        case .pending, .slowDown:
            throw OIDCError(
                .providerError, "The provider has no tokens for this backchannel login yet (authorization_pending) although it was notified as done.",
                providerError: OIDCError.ProviderError(error: "authorization_pending"))
        }
    }

    /// The login to keep from `tokens`: an OpenID login's ID token required and verified.
    private func completed(_ tokens: TokenSet) async throws(OIDCError) -> StoredLogin {
        if relyingParty.identity == .openID, tokens.idToken == nil {
            throw OIDCError(.missingParameter, "The provider's backchannel login sent no ID token (CIBA Core §10.1.1 requires one): nothing is kept.")
        }
        let acr = request.acrValues.flatMap { $0.isEmpty ? nil : $0 }
        var login = try await relyingParty.identity.complete(tokens, at: relyingParty, dpopKey: dpopKey) { tokens, idToken throws(OIDCError) in
            try await relyingParty.verifiedWithoutFrontChannel(tokens, idToken: idToken, dpopKey: dpopKey, now: clock.now(), acceptedACRValues: acr)
        }
        login.grant = StoredLogin.Grant(type: .ciba)
        return login
    }

    /// The error of a wait that ended without tokens.
    private func expired(_ expiry: GrantPoller.Expiry) -> OIDCError {
        if let providerError = expiry.providerError {
            return OIDCError(.providerError, "The backchannel login expired before the user approved it (expired_token); run the login again.", providerError: providerError)
        }
        if expiry.timedOut, let timeout {
            return OIDCError(.loginTimedOut, "Nobody approved the backchannel login within \(timeout.components.seconds) s; run the login again.")
        }
        return OIDCError(.loginTimedOut, "The backchannel login expired before the user approved it; run the login again.")
    }
}

extension RelyingParty {
    /// Starts a login that the user approves on their own device (OpenID CIBA Core 1.0 §7): the
    /// backchannel authentication request, with the client's authentication and `openid` among the
    /// scopes, signed with the request object key when the relying party has one
    /// (``RelyingParty/Configuration/frontChannel``; CIBA Core §7.1.1). Show the user
    /// ``BackchannelAuthenticationRequest/bindingMessage``, then call
    /// ``BackchannelLogin/waitForLogin()`` (poll mode) or, once notified,
    /// ``BackchannelLogin/completeAfterNotification()`` (ping mode).
    ///
    /// - Throws: `profileViolation` under ``SecurityProfile/fapi2`` (the profile holds the code
    ///   flow); `invalidArgument` for a public client, a provider without a
    ///   `backchannel_authentication_endpoint`, or a hint or binding message that is not plain text
    ///   (refused before sending); `missingParameter` at a provider without keys; the provider's refusal.
    public func backchannelLogin(_ request: BackchannelAuthenticationRequest) async throws(OIDCError) -> BackchannelLogin {
        try configuration.securityProfile.checkDeviceFlow("a backchannel login (CIBA; FAPI-CIBA is another profile)")
        try identity.checkReady(self)
        let dpopKey = try newLoginDPoPKey()
        let asked = identity.scopes(request.scopes.isEmpty ? provider.defaultScopes : request.scopes)
        // A relying party that signs its requests (FAPI-CIBA) signs this one too.
        let authentication = try await tokenClient.requestBackchannelAuthentication(
            request, scopes: asked, signedWith: configuration.frontChannel.requestObjectKey)
        var login = BackchannelLogin(relyingParty: self, request: request, authentication: authentication)
        login.dpopKey = dpopKey
        return login
    }
}
