public import Foundation

/// The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636, OIDC Core §3.1) for servers and
/// apps that receive the redirect themselves: ``authorizationRequest(redirectURI:scopes:configure:)``,
/// then ``authorizationURL(for:)`` for the browser, then ``completeLogin(callback:for:now:)`` with the URL
/// the browser came back to. Keep the request in between (``PendingAuthorizations`` on a server).
extension RelyingParty {
    /// A new authorization request: fresh `state`, `nonce` and PKCE verifier (S256), this client's
    /// id, the provider's endpoint, issuer and RFC 9207 promise, the configuration's
    /// ``Configuration/responseMode`` and DPoP key, and what its security profile requires
    ///.
    ///
    /// - Parameters:
    ///   - redirectURI: the redirect URI exactly as registered with the provider.
    ///   - scopes: the scope values; the provider configuration's default ones when `nil`. `openid`
    ///     is always asked for (put first when missing), since the login verifies an ID token (OIDC
    ///     Core §3.1.2.1).
    ///   - configure: sets anything else (`prompt`, `loginHint`, `maxAge`, additional parameters),
    ///     or replaces the request, as a preset's builder does (``AuthorizationRequest/schibsted(environment:clientID:redirectURI:extraScopes:mfa:prompt:loginHint:assertion:xDomainID:state:nonce:codeVerifier:)``).
    /// - Throws: ``OIDCError/Code/randomFailure`` when the random generator fails; what `configure` throws.
    public func authorizationRequest(
        redirectURI: String, scopes: [String]? = nil,
        configure: (inout AuthorizationRequest) throws(OIDCError) -> Void = { _ in }
    ) throws(OIDCError) -> AuthorizationRequest {
        let asked = scopes ?? provider.defaultScopes
        // A plain OAuth server (found from a resource) gets exactly the scopes asked: no ID token comes.
        let withOpenID = identity.scopes(asked)
        try configuration.securityProfile.validate(self)
        var request = try AuthorizationRequest(provider: provider, clientID: clientID, redirectURI: redirectURI, scopes: withOpenID)
        request.additionalParameters += tokenClient.resourceIndicatorParameters
        request.dpopKey = try newLoginDPoPKey()
        request.responseMode = configuration.responseMode
        configuration.securityProfile.constrain(&request)
        try configure(&request)
        return request
    }

    /// Where to send the browser for `request`: ``authorizationTarget(for:)``'s URL. Redirect the
    /// browser at once rather than showing the URL for later: a request object is good for 60 s,
    /// and a pushed request URI for what the provider says.
    ///
    /// - Throws: what `FrontChannel.target(for:at:)` throws.
    public func authorizationURL(for request: AuthorizationRequest) async throws(OIDCError) -> URL {
        try await authorizationTarget(for: request).url
    }

    /// Where to send the browser for `request`, and until when that works: the configuration's
    /// ``Configuration/frontChannel`` makes it (`FrontChannel.target(for:at:)`), under the
    /// provider's requirements and the security profile. A flow that waits for the user renews it
    /// shortly before ``AuthorizationTarget/expiresAt`` (``LoopbackLogin`` does).
    ///
    /// - Throws: what `FrontChannel.target(for:at:)` throws.
    public func authorizationTarget(for request: AuthorizationRequest) async throws(OIDCError) -> AuthorizationTarget {
        try await configuration.frontChannel.target(for: request, at: self)
    }

    /// How long the request objects of ``authorizationURL(for:)`` are good for.
    static var requestObjectLifetime: Duration { FrontChannel.requestObjectLifetime }

    /// Whether ``authorizationURL(for:)`` pushes: the provider requires it, the front channel or
    /// the security profile says always.
    public var pushesAuthorizationRequests: Bool { configuration.frontChannel.pushes(at: self) }

    /// Completes a login from the URL the browser came back to: the callback is checked (a
    /// repeated parameter, then `state` first, then RFC 9207 `iss`, then a provider error; for a
    /// request that asked for a signed response (JARM), its `response` is verified with ``keys``
    /// before all that, and plain parameters are refused as a downgrade), the code
    /// exchanged with the request's PKCE verifier, and the ID token verified with ``keys`` (OIDC
    /// Core §3.1.3.7) before anything is returned.
    ///
    /// - Parameters:
    ///   - callback: the redirect URI with the provider's query, exactly as it reached the app or
    ///     server.
    ///   - request: the request that started this login.
    ///   - now: the time the ID token is checked at; the token client's clock when `nil`.
    /// - Throws: ``OIDCError/Code/notOurRedirect`` for a URL that is not the request's redirect, or
    ///   is an intermediate one (a path with `bankId`: keep waiting; the context's `redirect` says
    ///   `intermediate`); ``OIDCError/Code/cancelled`` for a cancel redirect;
    ///   ``OIDCError/Code/missingParameter`` when the provider publishes no `jwks_uri` (before the
    ///   code is spent); what ``AuthorizationResponse/init(callbackURL:request:)`` (or, for a request
    ///   that asked for a signed response, ``AuthorizationResponse/init(callbackURL:request:verifier:keys:now:)``)
    ///   and ``completeLogin(_:for:now:)`` throw.
    public func completeLogin(callback: URL, for request: AuthorizationRequest, now: Date? = nil) async throws(OIDCError) -> VerifiedLogin {
        let response: AuthorizationResponse
        if request.responseMode?.isJARM == true, try RedirectMatcher(redirectURI: request.redirectURI).match(callback) == .authorizationResponse {
            response = try await AuthorizationResponse(
                callbackURL: callback, request: request, verifier: jarmVerifier(for: request), keys: try requireKeys(), now: now ?? tokenClient.now())
        } else {
            response = try request.handleRedirect(callback).response(for: request)
        }
        return try await completeLogin(response, for: request, now: now)
    }

    /// Completes a login from a callback already checked (``AuthorizationRequest/handleRedirect(_:)``,
    /// or a loopback listener's answer): the code exchanged, the ID token verified.
    ///
    /// - Throws: ``OIDCError/Code/missingParameter`` when the provider publishes no `jwks_uri`;
    ///   what ``TokenClient/completeLogin(_:for:keys:now:configure:)`` throws.
    public func completeLogin(_ response: AuthorizationResponse, for request: AuthorizationRequest, now: Date? = nil) async throws(OIDCError)
        -> VerifiedLogin
    {
        let profile = configuration.securityProfile
        try checkSettings(of: request, sending: false)
        return try await tokenClient(proving: request.dpopKey).completeLogin(response, for: request, keys: try requireKeys(), now: now) { verifier in
            profile.constrain(&verifier)
        }
    }

    /// How this relying party verifies `request`'s signed responses (JARM): the request's issuer
    /// and client, the provider's `authorization_signing_alg_values_supported` (RS256 when it names
    /// none), within the security profile's algorithms (FAPI 2.0 §5.4.1: every signature).
    public func jarmVerifier(for request: AuthorizationRequest) -> JARMVerifier {
        var verifier = JARMVerifier(provider: provider, clientID: request.clientID)
        if let issuer = request.issuer { verifier.issuer = issuer }
        configuration.securityProfile.constrain(&verifier)
        return verifier
    }

    /// `tokens` of a grant without a front channel (the device flow, CIBA) as a verified login:
    /// their ID token checked without a nonce (none was sent), with `acceptedACRValues` when the
    /// login asked for them; bound to `dpopKey`.
    package func verifiedWithoutFrontChannel(
        _ tokens: TokenSet, idToken: Secret, dpopKey: DPoPKey?, now: Date, acceptedACRValues: [String]? = nil
    ) async throws(OIDCError) -> VerifiedLogin {
        var verifier = idTokenVerifier(for: tokens, nonce: .notChecked)
        if let acceptedACRValues { verifier.acceptedACRValues = Set(acceptedACRValues) }
        let verified = try await verifier.verify(idToken.revealedValue, keys: try requireKeys(), now: now)
        var login = VerifiedLogin(tokens: tokens, idToken: verified, clientID: clientID, issuer: verifier.issuer, provider: provider)
        login.dpopKey = dpopKey
        return login
    }

    /// The verifier of the ID token in `tokens`, which a token endpoint of this provider sent: its
    /// issuer, this client, `nonce`'s rule, the access token's `at_hash`, the client secret for
    /// HS256 when there is one, and the security profile's algorithms. For a flow built from the
    /// parts; the code flow adds the request's `max_age` and required `amr`.
    package func idTokenVerifier(for tokens: TokenSet, nonce: IDTokenVerifier.NonceRule) -> IDTokenVerifier {
        IDTokenVerifier(
            tokenResponseOf: provider.issuer, clientID: clientID, nonce: nonce, accessToken: tokens.accessToken, issuerMatching: provider.issuerMatching,
            hmacSecret: tokenClient.authentication.secret, profile: configuration.securityProfile)
    }
}

extension AuthorizationRequest.RedirectOutcome {
    /// The provider's answer of an authorized outcome; the error that says why there is none.
    fileprivate func response(for request: AuthorizationRequest) throws(OIDCError) -> AuthorizationResponse {
        switch self {
        case .authorized(let response):
            return response
        case .ignored:
            throw OIDCError(
                .notOurRedirect, "This URL is an intermediate redirect (an app such as BankID returning), not the provider's answer; keep waiting for it.",
                context: ["redirect": "intermediate"])
        case .cancelled:
            throw OIDCError(.cancelled, "The login was cancelled in the browser.")
        case .notOurs:
            throw OIDCError(
                .notOurRedirect, "This URL is not the login's redirect URI (\(request.redirectURI)); hand only that redirect to completeLogin.",
                context: ["redirect": "other", "expected": request.redirectURI])
        }
    }
}
