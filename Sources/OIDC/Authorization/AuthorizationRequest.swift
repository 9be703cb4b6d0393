public import Foundation

/// An OAuth 2.0 / OpenID Connect authorization request with PKCE (RFC 6749 §4.1.1, RFC 7636,
/// OIDC Core §3.1.2.1), and the values the callback and the code exchange will need.
///
/// Keep the request until the redirect comes back: ``handleRedirect(_:)`` checks the callback
/// against its `state` and issuer, and the code exchange needs its ``pkce`` verifier, ``nonce`` and
/// ``redirectURI``.
///
/// ``url()`` writes the parameters in one stable order: `client_id`, `redirect_uri`,
/// `response_type`, `response_mode`, `scope`, `state`, `nonce`, `code_challenge`, `code_challenge_method`,
/// `login_hint`, `max_age`, `ui_locales`, `dpop_jkt`, the additional parameters in their order, `acr_values`,
/// `prompt`. Every value is percent-encoded (a space is `%20`; `+ & = # / %` are escaped), and query
/// items already in the endpoint are kept in front.
public struct AuthorizationRequest: Sendable {
    /// The provider's authorization endpoint: https, or plain http on a loopback host (``url()`` checks).
    public var authorizationEndpoint: URL
    /// The client identifier registered with the provider (`client_id`); must not be empty.
    public var clientID: String
    /// The redirect URI exactly as registered: `http://127.0.0.1:PORT/callback`,
    /// `com.example.app:/callback`, or an https link the app claims.
    public var redirectURI: String
    /// The requested scope values, sent space-separated in this order without duplicates (`scope`).
    /// Each must be a scope token of RFC 6749 §3.3; an empty list sends no `scope`.
    public var scopes: [String]
    /// The CSRF token; the callback must carry it back unchanged.
    public var state: String
    /// The ID token must carry this nonce (OIDC Core §3.1.2.1); `nil` sends none.
    public var nonce: String?
    /// PKCE verifier and challenge; `nil` sends no challenge (not recommended).
    public var pkce: PKCE?
    /// `prompt` (OIDC Core §3.1.2.1), such as `login`, `consent` or `select_account`; `nil` or empty
    /// sends none.
    public var prompt: String?
    /// `login_hint`: who is logging in (an email address, say), to prefill the provider's page; `nil`
    /// or empty sends none.
    public var loginHint: String?
    /// Space-separated requested Authentication Context Class References.
    public var acrValues: String?
    /// Maximum authentication age in seconds; the ID token's `auth_time` is then checked.
    public var maxAge: Int?
    /// `ui_locales`: the preferred languages of the provider's pages, space-separated BCP 47 tags
    /// (`sv en`); `nil` or empty sends none.
    public var uiLocales: String?
    /// Any other parameters (`resource`, `assertion`, …), sent in this order.
    public var additionalParameters: [OAuthParameter]
    /// The expected issuer, for the callback's `iss` (RFC 9207) and later the ID token.
    public var issuer: String?
    /// How ``issuer`` is compared with the callback's `iss` and the ID token's: ``IssuerMatching/exact``
    /// unless the provider configuration says otherwise.
    public var issuerMatching: IssuerMatching
    /// Whether a callback without `iss` is rejected (the provider advertises
    /// `authorization_response_iss_parameter_supported`).
    public var requiresIssuerInResponse: Bool
    /// `response_mode`: how the provider returns its answer; `nil` (the default) sends none, which
    /// means `query` for the code flow. ``AuthorizationResponseMode/jwt`` or
    /// ``AuthorizationResponseMode/queryJWT`` asks for a signed response (JARM): the callback must
    /// then carry only `response`, a JWT the provider signed, and is read with
    /// ``AuthorizationResponse/init(callbackURL:request:verifier:keys:now:)`` (which
    /// ``RelyingParty/completeLogin(callback:for:now:)`` and ``LoopbackLogin`` use); a plain `code`
    /// is refused as a downgrade.
    public var responseMode: AuthorizationResponseMode?
    /// Authentication methods the ID token's `amr` must show (not sent; checked on the answer):
    /// the Schibsted preset sets it when multi-factor authentication is requested.
    public var requiredAMRValues: [String]?
    /// Authentication context classes one of which the ID token's `acr` must be (not sent; checked
    /// on the answer): ``acrValues`` asks the provider for them, which it may ignore (OpenID
    /// Connect Core §3.1.2.1); set this too when the login is worth nothing without one (a step-up
    /// a resource asked for, RFC 9470).
    public var requiredACRValues: [String]?
    /// The DPoP key of this login (RFC 9449), when its tokens are to be DPoP-bound: its thumbprint
    /// is sent as `dpop_jkt` (§10), so the code is bound too, and the exchange proves possession
    /// of it. ``RelyingParty/authorizationRequest(redirectURI:scopes:configure:)`` sets it when
    /// ``RelyingParty/Configuration/dpop`` is on. Printing the request never shows the key.
    public var dpopKey: DPoPKey?

    /// A request to an explicit endpoint, with fresh random `state`, `nonce` and PKCE verifier.
    ///
    /// - Throws: ``OIDCError/Code/randomFailure`` if the random generator fails.
    public init(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: String,
        scopes: [String] = ["openid"],
        issuer: String? = nil
    ) throws(OIDCError) {
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.state = try RandomToken.generate()
        self.nonce = try RandomToken.generate()
        self.pkce = try PKCE.generate()
        self.additionalParameters = []
        self.issuer = issuer
        self.issuerMatching = .exact
        self.requiresIssuerInResponse = false
    }

    /// A request to a known provider, with its default scopes when `scopes` is `nil`, and fresh
    /// random `state`, `nonce` and PKCE verifier.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the provider configuration has no
    ///   authorization endpoint; ``OIDCError/Code/randomFailure`` if the random generator fails.
    public init(
        provider: ProviderConfiguration,
        clientID: String,
        redirectURI: String,
        scopes: [String]? = nil
    ) throws(OIDCError) {
        guard let endpoint = provider.authorizationEndpoint else {
            throw .invalidArgument(
                "The provider configuration of \(provider.issuer) has no authorization endpoint, so no browser login can start; set authorizationEndpoint, or use discovery."
            )
        }
        try self.init(
            authorizationEndpoint: endpoint,
            clientID: clientID,
            redirectURI: redirectURI,
            scopes: scopes ?? provider.defaultScopes,
            issuer: provider.issuer
        )
        issuerMatching = provider.issuerMatching
        requiresIssuerInResponse = provider.authorizationResponseIssParameterSupported
    }

    /// Parameters the library sets itself; additional parameters may not use these names.
    package static let librarySetParameterNames: Set<String> = [
        "client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce", "code_challenge",
        "code_challenge_method", "login_hint", "max_age", "ui_locales", "acr_values", "prompt",
        "dpop_jkt",
    ]

    /// The query parameters in the order ``url()`` writes them.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for an empty client id or state, a bad scope
    ///   token or redirect URI, a negative `max_age`; ``OIDCError/Code/reservedParameter`` or
    ///   ``OIDCError/Code/duplicateParameter`` for a clashing additional parameter.
    package func parameters() throws(OIDCError) -> [OAuthParameter] {
        guard !clientID.isEmpty else { throw .invalidArgument("The client id is empty.") }
        guard !state.isEmpty else { throw .invalidArgument("The state is empty; it is the CSRF defence.") }
        try Self.validateRedirectURI(redirectURI)
        let scope = try Self.scopeValue(scopes)

        var result: [OAuthParameter] = [
            .init("client_id", clientID),
            .init("redirect_uri", redirectURI),
            .init("response_type", "code"),
        ]
        if let responseMode { result.append(.init("response_mode", responseMode.rawValue)) }
        if !scope.isEmpty { result.append(.init("scope", scope)) }
        result.append(.init("state", state))
        if let nonce {
            guard !nonce.isEmpty else { throw .invalidArgument("The nonce is empty; pass nil to send none.") }
            result.append(.init("nonce", nonce))
        }
        if let pkce {
            result.append(.init("code_challenge", pkce.challenge))
            result.append(.init("code_challenge_method", pkce.method))
        }
        if let loginHint, !loginHint.isEmpty { result.append(.init("login_hint", loginHint)) }
        if let maxAge {
            guard maxAge >= 0 else { throw .invalidArgument("max_age must be zero or more seconds, not \(maxAge).") }
            result.append(.init("max_age", String(maxAge)))
        }
        if let uiLocales, !uiLocales.isEmpty { result.append(.init("ui_locales", uiLocales)) }
        result += dpopBindingParameters

        var extraNames = Set<String>()
        for parameter in additionalParameters {
            guard !parameter.name.isEmpty else { throw .invalidArgument("An additional parameter has an empty name.") }
            guard !Self.librarySetParameterNames.contains(parameter.name) else {
                throw OIDCError(
                    .reservedParameter,
                    "The parameter '\(parameter.name)' is set by the library; use its dedicated option instead.",
                    context: ["parameter": parameter.name]
                )
            }
            guard extraNames.insert(parameter.name).inserted else {
                throw OIDCError(
                    .duplicateParameter, "The additional parameter '\(parameter.name)' is given twice.",
                    context: ["parameter": parameter.name]
                )
            }
            result.append(parameter)
        }
        if let acrValues, !acrValues.isEmpty { result.append(.init("acr_values", acrValues)) }
        if let prompt, !prompt.isEmpty { result.append(.init("prompt", prompt)) }
        return result
    }

    /// The authorization URL to open in the user's browser.
    ///
    /// - Throws: what building its parameters throws; ``OIDCError/Code/insecureEndpoint`` for a plain-http
    ///   endpoint off loopback; ``OIDCError/Code/duplicateParameter`` when the endpoint's own query
    ///   already has one of the parameters.
    public func url() throws(OIDCError) -> URL {
        try EndpointURLPolicy.validate(authorizationEndpoint, role: "authorization endpoint")
        return try Self.assemble(authorizationEndpoint, try parameters())
    }

    /// The URL that sends the browser to the authorization endpoint with a pushed request (RFC 9126
    /// §4): only `client_id` and the `request_uri` the provider's pushed authorization request
    /// endpoint gave for this request's parameters.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for an empty client id or request URI; as
    ///   ``url()`` for the endpoint.
    public func url(requestURI: String) throws(OIDCError) -> URL {
        try EndpointURLPolicy.validate(authorizationEndpoint, role: "authorization endpoint")
        guard !clientID.isEmpty else { throw .invalidArgument("The client id is empty.") }
        guard !requestURI.isEmpty else { throw .invalidArgument("The request URI is empty.") }
        return try Self.assemble(authorizationEndpoint, [.init("client_id", clientID), .init("request_uri", requestURI)])
    }

    /// `endpoint` with `parameters` added to its query; a parameter the endpoint's own query
    /// already has is refused.
    static func assemble(_ endpoint: URL, _ parameters: [OAuthParameter]) throws(OIDCError) -> URL {
        let query = parameters.map {
            PercentEncoding.encode($0.name, style: .uriComponent) + "="
                + PercentEncoding.encode($0.value, style: .uriComponent)
        }.joined(separator: "&")

        var base = endpoint.absoluteString
        let existing = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        if !existing.isEmpty {
            let ours = Set(parameters.map(\.name))
            for item in try FormURLEncoding.decode(existing, allowDuplicates: true) where ours.contains(item.name) {
                throw OIDCError(
                    .duplicateParameter,
                    "The authorization endpoint's query already has '\(item.name)'; remove it from the endpoint.",
                    context: ["parameter": item.name]
                )
            }
            base += base.hasSuffix("&") ? "" : "&"
        } else if !base.hasSuffix("?") {
            base += "?"
        }
        guard let url = URL(string: base + query) else {
            throw OIDCError(.malformedURL, "The authorization URL could not be assembled from the endpoint.")
        }
        return url
    }

    static func validateRedirectURI(_ uri: String) throws(OIDCError) {
        guard let url = URL(string: uri), let scheme = url.scheme, !scheme.isEmpty else {
            throw .invalidArgument("The redirect URI '\(uri)' is not an absolute URI (RFC 6749 §3.1.2).")
        }
        guard url.fragment == nil, !uri.contains("#") else {
            throw .invalidArgument("The redirect URI must not contain a fragment (RFC 6749 §3.1.2).")
        }
        if ["http", "https"].contains(scheme.lowercased()), (url.host ?? "").isEmpty {
            throw .invalidArgument("The redirect URI '\(uri)' has no host; an http(s) redirect URI needs one.")
        }
        if scheme.lowercased() == "http", let host = url.host, !EndpointURLPolicy.isLoopback(host: host) {
            throw OIDCError(
                .insecureEndpoint,
                "The redirect URI uses plain http on '\(host)'; use https, a loopback address, or an app scheme.",
                context: ["host": host]
            )
        }
    }

    /// Scope tokens joined by spaces, duplicates dropped, order kept (RFC 6749 §3.3).
    package static func scopeValue(_ scopes: [String]) throws(OIDCError) -> String {
        var seen = Set<String>()
        var ordered: [String] = []
        for scope in scopes {
            let valid = !scope.isEmpty && scope.utf8.allSatisfy { b in
                b == 0x21 || (b >= 0x23 && b <= 0x5B) || (b >= 0x5D && b <= 0x7E)
            }
            guard valid else {
                throw .invalidArgument(
                    "The scope '\(scope)' is not a valid scope token (RFC 6749 §3.3: printable ASCII, no space, quote or backslash)."
                )
            }
            if seen.insert(scope).inserted { ordered.append(scope) }
        }
        return ordered.joined(separator: " ")
    }
}
