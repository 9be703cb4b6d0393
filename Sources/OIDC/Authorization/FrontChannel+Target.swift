internal import Foundation

extension FrontChannel {
    /// Where to send the browser for `request` of `relyingParty`: the one place a login's
    /// front-channel URL is made (``RelyingParty/authorizationTarget(for:)`` calls it).
    ///
    /// The relying party's security profile is checked first (`SecurityProfile.validate(_:)`), and
    /// the request against its settings. A pushed request's parameters (`pushes(at:)`) go to the
    /// provider, authenticated as the client (``TokenClient/pushAuthorizationRequest(_:requestObject:)``),
    /// and the URL carries only `client_id` and the `request_uri` it gave; each call pushes anew, so
    /// every login has its own single-use request URI. With ``requestObjectKey``, the parameters
    /// travel only inside a signed request object (RFC 9101): pushed, or by value in a URL with only
    /// `client_id` and `request`, good for 60 s. Otherwise it is the request's
    /// URL (``AuthorizationRequest/url()``), which does not expire.
    ///
    /// - Throws: ``OIDCError/Code/profileViolation`` for what the profile refuses; what
    ///   ``AuthorizationRequest/url()`` throws; ``OIDCError/Code/invalidArgument`` when the provider
    ///   names no pushed authorization request endpoint (for a pushed request), requires signed
    ///   request objects and there is no ``requestObjectKey``, lists `response_modes_supported`
    ///   without the request's ``AuthorizationRequest/responseMode``, takes request objects of other
    ///   algorithms than the key's, or the request is another client's (before anything is signed
    ///   or sent); what ``AuthorizationRequest/requestObject(signedWith:audience:lifetime:now:)`` and
    ///   ``TokenClient/pushAuthorizationRequest(_:requestObject:)`` throw.
    package func target(for request: AuthorizationRequest, at relyingParty: RelyingParty) async throws(OIDCError) -> AuthorizationTarget {
        let profile = relyingParty.configuration.securityProfile
        try profile.validate(relyingParty)
        try relyingParty.checkSettings(of: request, sending: true)
        try checkProvider(of: relyingParty, for: request)
        let pushes = pushes(at: relyingParty)
        guard pushes || requestObjectKey != nil else { return AuthorizationTarget(url: try request.url()) }
        let signedAt = relyingParty.tokenClient.now()
        let object = try requestObject(for: request, at: relyingParty, now: signedAt)
        if !pushes, let object {
            return AuthorizationTarget(url: try request.url(requestObject: object), expiresAt: signedAt.addingTimeInterval(Self.requestObjectLifetime.timeInterval))
        }
        let pushed = try await push(request, object: object, at: relyingParty)
        try profile.check(pushed)
        return AuthorizationTarget(url: try request.url(requestURI: pushed.requestURI), expiresAt: pushed.expiresAt)
    }

    /// What the provider refuses of every request: a response mode it does not offer; no request
    /// object when it takes only those.
    private func checkProvider(of relyingParty: RelyingParty, for request: AuthorizationRequest) throws(OIDCError) {
        let provider = relyingParty.provider
        if let mode = request.responseMode, let supported = provider.responseModesSupported, !supported.contains(mode.rawValue) {
            throw .invalidArgument(
                "The provider \(provider.issuer) does not offer response_mode=\(mode.rawValue) (its response_modes_supported: \(supported.joined(separator: ", "))); \(mode.isJARM ? "it cannot sign its authorization responses (JARM), so do not ask for them" : "leave the response mode unset").",
                context: ["response_mode": mode.rawValue]
            )
        }
        if provider.requiresSignedRequestObjects, requestObjectKey == nil {
            throw .invalidArgument(
                "The provider \(provider.issuer) takes only signed request objects (require_signed_request_object); make the relying party with RelyingParty.Configuration(frontChannel: .signed(key)) or .pushed(signedWith: key) (formerly RelyingParty.requestObjectKey), key being the client's private key."
            )
        }
    }

    /// `request` as a request object signed with ``requestObjectKey`` at `now` (`nil` without a
    /// key), once the checks before anything is signed or pushed pass.
    private func requestObject(for request: AuthorizationRequest, at relyingParty: RelyingParty, now: Date) throws(OIDCError) -> String? {
        try checkSigned(request, at: relyingParty)
        guard let key = requestObjectKey else { return nil }
        return try request.requestObject(signedWith: key, audience: relyingParty.provider.issuer, lifetime: Self.requestObjectLifetime, now: now)
    }

    /// What is checked before a request is signed or pushed: it is this client's, its endpoint is
    /// one a browser may be sent to, and the provider takes the key's algorithm.
    private func checkSigned(_ request: AuthorizationRequest, at relyingParty: RelyingParty) throws(OIDCError) {
        let provider = relyingParty.provider
        guard request.clientID == relyingParty.clientID else {
            throw .invalidArgument(
                "The request is for client '\(request.clientID)', this relying party is '\(relyingParty.clientID)': the provider would see one client sign or push it and the browser name another."
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
    }

    /// Pushes `request` (or its signed `object`) to the provider, with a DPoP proof of the request's key.
    private func push(_ request: AuthorizationRequest, object: String?, at relyingParty: RelyingParty) async throws(OIDCError) -> PushedAuthorization {
        let provider = relyingParty.provider
        guard provider.pushedAuthorizationRequestEndpoint != nil else {
            let why = provider.requiresPushedAuthorizationRequests
                ? "The provider \(provider.issuer) requires pushed authorization requests but names no pushed_authorization_request_endpoint"
                : "Pushed authorization requests were asked for, but the provider \(provider.issuer) names no pushed_authorization_request_endpoint"
            throw .invalidArgument(why + "; set ProviderConfiguration.pushedAuthorizationRequestEndpoint, or use discovery.")
        }
        return try await relyingParty.tokenClient(proving: request.dpopKey).pushAuthorizationRequest(request, requestObject: object)
    }
}
