public import Foundation

/// The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636, OIDC Core §3.1) for servers and
/// apps that receive the redirect themselves: ``authorizationRequest(redirectURI:scopes:configure:)``,
/// then ``authorizationURL(for:)`` for the browser, then ``completeLogin(callback:for:now:)`` with the URL
/// the browser came back to. Keep the request in between (``PendingAuthorizations`` on a server).
extension RelyingParty {
    /// A new authorization request: fresh `state`, `nonce` and PKCE verifier (S256), this client's
    /// id, the provider's endpoint, issuer and RFC 9207 promise, and ``responseMode``.
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
        let withOpenID = asked.contains("openid") ? asked : ["openid"] + asked
        try checkSecurityProfile()
        var request = try AuthorizationRequest(provider: provider, clientID: clientID, redirectURI: redirectURI, scopes: withOpenID)
        request.dpopKey = try makeDPoPKey()
        request.responseMode = responseMode
        // FAPI 2.0 §5.3.2.2: the client checks the RFC 9207 iss of every authorization response.
        if securityProfile == .fapi2 { request.requiresIssuerInResponse = true }
        try configure(&request)
        return request
    }

    /// Where to send the browser for `request`: the one place a login's front-channel URL is made.
    ///
    /// When the provider requires pushed authorization requests (RFC 9126,
    /// ``ProviderConfiguration/requiresPushedAuthorizationRequests``), or ``pushedAuthorization`` is
    /// ``PushedAuthorizationUse/always``, the request's parameters are first pushed to the provider,
    /// authenticated as the client (``TokenClient/pushAuthorizationRequest(_:requestObject:)``), and the URL
    /// carries only `client_id` and the `request_uri` it gave (``AuthorizationRequest/url(requestURI:)``):
    /// nothing of the request can be read or changed in the browser. Each call pushes anew, so
    /// every login has its own single-use request URI (``LoopbackLogin`` also pushes again when
    /// the one its start URL leads to is about to expire unopened). Otherwise it is the request's
    /// URL (``AuthorizationRequest/url()``). With ``requestObjectKey``, the parameters travel only
    /// inside a signed request object (RFC 9101): pushed, or by value in a URL with only
    /// `client_id` and `request` (``AuthorizationRequest/url(requestObject:)``). A request object
    /// is good for 60 s, and a pushed request URI for what the provider says: redirect the browser
    /// at once rather than showing the URL for later.
    ///
    /// - Throws: what ``AuthorizationRequest/url()`` throws (a bad scope, a reserved parameter, an
    ///   endpoint that is not https); ``OIDCError/Code/invalidArgument`` when
    ///   the provider names no pushed authorization request endpoint (for a pushed request),
    ///   requires signed request objects and no ``requestObjectKey`` is set, lists
    ///   `response_modes_supported` without the request's ``AuthorizationRequest/responseMode``, takes request objects of
    ///   other algorithms than the key's, or the request is another client's (before anything is
    ///   signed or sent); what ``AuthorizationRequest/requestObject(signedWith:audience:lifetime:now:)`` throws; and what ``TokenClient/pushAuthorizationRequest(_:requestObject:)`` throws.
    public func authorizationURL(for request: AuthorizationRequest) async throws(OIDCError) -> URL {
        try await authorizationTarget(for: request).url
    }

    /// How long the request objects of ``authorizationURL(for:)`` are good for.
    static let requestObjectLifetime = Duration.seconds(60)

    /// ``authorizationURL(for:)``, with when its URL stops working: a pushed request's URI expires,
    /// or a request object by value; `nil` for a plain URL.
    func authorizationTarget(for request: AuthorizationRequest) async throws(OIDCError) -> (url: URL, expiresAt: Date?) {
        try checkSecurityProfile()
        try requireRequestSettings(request)
        if securityProfile == .fapi2, !request.requiresIssuerInResponse {
            throw OIDCError(
                .profileViolation,
                "FAPI 2.0: this request was not made by this relying party's authorizationRequest(redirectURI:), so it lacks the RFC 9207 iss requirement or the DPoP key; make it with that method. No authorization request was sent.",
                context: ["profile": "fapi2"]
            )
        }
        if let mode = request.responseMode, let supported = provider.responseModesSupported, !supported.contains(mode.rawValue) {
            throw .invalidArgument(
                "The provider \(provider.issuer) does not offer response_mode=\(mode.rawValue) (its response_modes_supported: \(supported.joined(separator: ", "))); \(mode.isJWTSecured ? "it cannot sign its authorization responses (JARM), so do not ask for them" : "leave the response mode unset").",
                context: ["response_mode": mode.rawValue]
            )
        }
        if provider.requiresSignedRequestObjects, requestObjectKey == nil {
            throw .invalidArgument(
                "The provider \(provider.issuer) takes only signed request objects (require_signed_request_object); set RelyingParty.requestObjectKey to the client's private key."
            )
        }
        guard pushesAuthorizationRequests || requestObjectKey != nil else { return (try request.url(), nil) }
        guard request.clientID == clientID else {
            throw .invalidArgument(
                "The request is for client '\(request.clientID)', this relying party is '\(clientID)': the provider would see one client sign or push it and the browser name another."
            )
        }
        // The URL the browser will get is checked before anything is signed or sent.
        try EndpointURLPolicy.validate(request.authorizationEndpoint, role: "authorization endpoint")
        if let key = requestObjectKey, !provider.requestObjectSigningAlgorithms.isEmpty,
            !provider.requestObjectSigningAlgorithms.contains(key.algorithm.rawValue)
        {
            throw .invalidArgument(
                "The provider takes request objects signed with \(provider.requestObjectSigningAlgorithms.joined(separator: ", ")), and this key signs \(key.algorithm.rawValue); give the key with an algorithm it takes (an RSA key can sign PS256)."
            )
        }
        let signedAt = tokenClient.now()
        let object = try requestObjectKey.map { (key) throws(OIDCError) -> String in
            try request.requestObject(signedWith: key, audience: provider.issuer, lifetime: Self.requestObjectLifetime, now: signedAt)
        }
        if !pushesAuthorizationRequests, let object {
            return (try request.url(requestObject: object), signedAt.addingTimeInterval(Self.requestObjectLifetime.timeInterval))
        }
        guard provider.pushedAuthorizationRequestEndpoint != nil else {
            let why = provider.requiresPushedAuthorizationRequests
                ? "The provider \(provider.issuer) requires pushed authorization requests but names no pushed_authorization_request_endpoint"
                : "Pushed authorization requests were asked for, but the provider \(provider.issuer) names no pushed_authorization_request_endpoint"
            throw .invalidArgument(why + "; set ProviderConfiguration.pushedAuthorizationRequestEndpoint, or use discovery.")
        }
        let pushed = try await tokenClient(proving: request.dpopKey).pushAuthorizationRequest(request, requestObject: object)
        try checkPushedLifetime(pushed)
        return (try request.url(requestURI: pushed.requestURI), pushed.expiresAt)
    }

    /// Whether ``authorizationURL(for:)`` pushes: the provider requires it, or ``pushedAuthorization`` says always.
    public var pushesAuthorizationRequests: Bool {
        provider.requiresPushedAuthorizationRequests || pushedAuthorization == .always || securityProfile == .fapi2
    }

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
        let outcome: AuthorizationRequest.RedirectOutcome
        if request.responseMode?.isJWTSecured == true, try RedirectMatcher(redirectURI: request.redirectURI).match(callback) == .authorizationResponse {
            let verifier = jarmVerifier(for: request)
            outcome = .authorized(
                try await AuthorizationResponse(callbackURL: callback, request: request, verifier: verifier, keys: try requireKeys(), now: now ?? tokenClient.now()))
        } else {
            outcome = try request.handleRedirect(callback)
        }
        switch outcome {
        case .authorized(let response):
            return try await completeLogin(response, for: request, now: now)
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

    /// Completes a login from a callback already checked (``AuthorizationRequest/handleRedirect(_:)``,
    /// or a loopback listener's answer): the code exchanged, the ID token verified.
    ///
    /// - Throws: ``OIDCError/Code/missingParameter`` when the provider publishes no `jwks_uri`;
    ///   what ``TokenClient/completeLogin(_:for:keys:now:configure:)`` throws.
    public func completeLogin(_ response: AuthorizationResponse, for request: AuthorizationRequest, now: Date? = nil) async throws(OIDCError)
        -> VerifiedLogin
    {
        let profile = securityProfile
        try requireRequestSettings(request)
        if profile == .fapi2, !request.requiresIssuerInResponse {
            throw OIDCError(
                .profileViolation,
                "FAPI 2.0 (Security Profile §5.3.2.2, iss in the authorization response): the request does not require the RFC 9207 iss; make it with authorizationRequest(redirectURI:) of this relying party. Nothing was exchanged.",
                context: ["profile": "fapi2"]
            )
        }
        return try await tokenClient(proving: request.dpopKey).completeLogin(response, for: request, keys: try requireKeys(), now: now) { verifier in
            // FAPI 2.0 §5.4.1: PS256, ES256 or EdDSA only.
            if profile == .fapi2 { verifier.allowedAlgorithms = verifier.allowedAlgorithms.intersection(Self.fapi2Algorithms) }
        }
    }

    /// How this relying party verifies `request`'s signed responses (JARM): the request's issuer
    /// and client, the provider's `authorization_signing_alg_values_supported` (RS256 when it names
    /// none); under FAPI 2.0 only those of PS256, ES256 and EdDSA (§5.4.1: every signature).
    func jarmVerifier(for request: AuthorizationRequest) -> JARMVerifier {
        var verifier = JARMVerifier(provider: provider, clientID: request.clientID)
        if let issuer = request.issuer { verifier.issuer = issuer }
        if securityProfile == .fapi2 { verifier.allowedAlgorithms = verifier.allowedAlgorithms.intersection(Self.fapi2Algorithms) }
        return verifier
    }
}
