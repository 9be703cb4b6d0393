public import Foundation
public import Logging

/// Talks to a provider's token, revocation and userinfo endpoints (RFC 6749, 7009, OIDC Core §5.3).
///
/// ```swift
/// let client = TokenClient(provider: .schibsted(.pre), clientID: "602525f2b41fa31789a95aa8", transport: transport)
/// let login = try await client.completeLogin(response, for: request, keys: jwks)   // exchange + ID-token verification
/// let fresh = try await client.refresh(login.tokens.refreshToken!)
/// ```
///
/// Every request is a form POST with the provider's extra headers (Schibsted's `X-OIDC: v1`) and the
/// client's ``authentication`` (none, `client_secret_basic`, `client_secret_post`,
/// `client_secret_jwt` or `private_key_jwt`); redirects are never followed. A code exchange is never retried: codes are single-use, and a retry could only fail or,
/// worse, be a replay.
///
/// With a ``logger``, each request is logged at `debug` with its grant type, endpoint, duration and
/// outcome (`expires_in`, whether a refresh or ID token came, the OAuth error code); never a
/// token, a code, a verifier or the client secret (see <doc:Logging>).
public struct TokenClient: Sendable {
    /// The provider: its endpoints, its extra token-request headers, how the client authenticates.
    public var provider: ProviderConfiguration
    /// This client's `client_id`.
    public var clientID: String
    /// How this client authenticates at every endpoint it calls.
    public var authentication: ClientAuthentication
    /// The client secret, for confidential clients (servers), as ``authentication`` holds it; it also
    /// keys HS256 ID tokens when those are allowed.
    @available(*, deprecated, message: "read authentication.secret")
    public var clientSecret: Secret? { authentication.secret }
    /// Sends the requests.
    public var transport: any HTTPTransport
    /// Timeout and size limit for every request; redirects are always off here.
    public var requestOptions: HTTPRequestOptions
    /// The clock that dates responses (token expiry is `expires_in` after receipt).
    public var now: @Sendable () -> Date
    /// Where requests and their outcomes are logged (label `oidc.token` by convention); a logger
    /// that discards everything unless one was given.
    public var logger: Logger
    /// Sender-constrains the tokens with DPoP (RFC 9449) when set: it configures the provider
    /// pipeline's DPoP stages, so that every call that carries a proof (token
    /// requests, pushed authorization requests, userinfo) gets a fresh one, one
    /// `use_dpop_nonce` challenge gets one retry with the new nonce, and a token response must be of
    /// `token_type` `DPoP` (a `Bearer` answer is a downgrade, refused). `nil` (the default): bearer
    /// tokens.
    public var dpop: DPoP?
    /// Your own stages of the provider pipeline (tracing, metrics, a header; see <doc:Pipelines>),
    /// in order: each sees every request to the provider as it leaves, with everything the library
    /// added (client authentication, the DPoP proof), and each answer as it comes back, before the
    /// library's nonce retry and error mapping: once per attempt. None by default.
    public var stages: [any HTTPStage] = []
    /// The relying party's ``RelyingParty/Configuration/providerRequestStages``: OAuth-level
    /// stages (``ProviderStage``) that see every call's request as a value, after the library's
    /// parameters (the `resource`) and before client authentication and the DPoP proof.
    package var requestStages: [any ProviderStage] = []
    /// The relying party's ``RelyingParty/Configuration/callStages``: stages around each whole call
    /// to the provider, the first outermost.
    package var callStages: [any CallStage] = []
    /// The relying party's ``RelyingParty/Configuration/providerStages``, run after ``stages``: kept
    /// apart, and replaced rather than added to, so that a relying party made from another's token
    /// client with the same configuration runs them once.
    package var configurationStages: [any HTTPStage] = []
    /// The `resource` (RFC 8707) every token request of this client carries: the code exchange,
    /// every refresh, client credentials, ``grant(_:parameters:scopes:)``. `nil` (the default)
    /// sends none. ``RelyingParty/forResource(_:clientID:authorizationServer:registrations:clientName:callbackPort:transport:requestOptions:logger:configuration:)``
    /// sets it to the resource's identifier.
    public var resource: String?

    /// Whether this client uses mutual TLS (RFC 8705): its transport presents a client certificate
    /// (``HTTPTransport/presentsClientCertificate``), or it authenticates with `tls_client_auth` or
    /// `self_signed_tls_client_auth`. Its requests then go to the provider's mTLS endpoint aliases.
    public var usesMutualTLS: Bool { authentication.method.isMutualTLS || transport.presentsClientCertificate }

    /// A client of `provider`'s endpoints.
    ///
    /// - Parameters:
    ///   - provider: the provider's endpoints, headers and client authentication method.
    ///   - clientID: this client's `client_id`.
    ///   - clientSecret: the secret of a confidential client; `nil` for a public one. It is sent as
    ///     the provider's ``ProviderConfiguration/clientAuthentication`` says.
    ///   - transport: sends the requests.
    ///   - requestOptions: timeout and size limit; `followRedirects` is always turned off.
    ///   - now: the clock that dates responses (injectable for tests).
    ///   - logger: where requests are logged, never with a secret; `nil` (the default) logs nothing.
    public init(
        provider: ProviderConfiguration, clientID: String, clientSecret: Secret? = nil, transport: any HTTPTransport,
        requestOptions: HTTPRequestOptions = HTTPRequestOptions(), now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger? = nil
    ) {
        self.init(
            provider: provider, clientID: clientID,
            authentication: ClientAuthentication(method: provider.clientAuthentication, secret: clientSecret), transport: transport,
            requestOptions: requestOptions, now: now, logger: logger
        )
    }

    /// A client of `provider`'s endpoints that authenticates with `authentication` (its method
    /// becomes the configuration's ``ProviderConfiguration/clientAuthentication``).
    ///
    /// When the client uses mutual TLS (``usesMutualTLS``), its ``provider`` is `provider` with the
    /// `mtls_endpoint_aliases` in place of the ordinary endpoints (RFC 8705 §5,
    /// ``ProviderConfiguration/usingMutualTLSEndpointAliases()``).
    ///
    /// - Parameters:
    ///   - provider: the provider's endpoints and headers.
    ///   - clientID: this client's `client_id`.
    ///   - authentication: how the client proves itself: a secret, a private key, or nothing.
    ///   - transport: sends the requests.
    ///   - requestOptions: timeout and size limit; `followRedirects` is always turned off.
    ///   - now: the clock that dates responses and client assertions (injectable for tests).
    ///   - logger: where requests are logged, never with a secret; `nil` (the default) logs nothing.
    public init(
        provider: ProviderConfiguration, clientID: String, authentication: ClientAuthentication, transport: any HTTPTransport,
        requestOptions: HTTPRequestOptions = HTTPRequestOptions(), now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger? = nil
    ) {
        self.logger = logger ?? OIDCLog.token
        let mutualTLS = authentication.method.isMutualTLS || transport.presentsClientCertificate
        self.provider = mutualTLS ? provider.usingMutualTLSEndpointAliases() : provider
        self.provider.clientAuthentication = authentication.method
        self.clientID = clientID
        self.authentication = authentication
        self.transport = transport
        self.requestOptions = requestOptions
        self.requestOptions.followRedirects = false
        self.now = now
    }

    /// Exchanges an authorization code (RFC 6749 §4.1.3) with the PKCE verifier (RFC 7636 §4.5).
    /// The ID token in the result is **not verified**: use ``completeLogin(_:for:keys:now:configure:)`` unless you
    /// verify it yourself.
    ///
    /// - Throws: ``OIDCError``: `providerError` (`invalid_grant` for a spent, expired or foreign
    ///   code or a wrong verifier; `invalid_client`, …), `serverError`, `networkFailure`,
    ///   `timedOut`, `malformedResponse`, `responseTooLarge`, TLS errors.
    public func exchangeCode(_ code: Secret, codeVerifier: Secret?, redirectURI: String, scopes: [String] = []) async throws(OIDCError) -> TokenSet {
        var form = [
            OAuthParameter("grant_type", "authorization_code"), OAuthParameter("code", code.revealedValue),
            OAuthParameter("redirect_uri", redirectURI),
        ]
        if let codeVerifier { form.append(OAuthParameter("code_verifier", codeVerifier.revealedValue)) }
        return try await post(form, .grant(.authorizationCode), to: try endpoint(provider.tokenEndpoint, "token endpoint")) {
            [self] (response: HTTPResponse) throws(OIDCError) -> TokenSet in
            try tokens(from: response, requestedScopes: scopes, grantType: GrantType.authorizationCode.rawValue)
        }
    }

    /// Refreshes (RFC 6749 §6). The result keeps nothing of the old set: merge it with
    /// a merge that keeps the old refresh token when the provider sent none.
    ///
    /// - Throws: as ``exchangeCode(_:codeVerifier:redirectURI:scopes:)``; `providerError` with
    ///   `invalid_grant` means the refresh token is dead: log the user out.
    ///
    /// With a ``resource``, the refresh carries it; a provider that refuses it there with
    /// `invalid_target` (Microsoft Entra does) gets one more try without it, logged.
    public func refresh(_ refreshToken: Secret, scopes: [String]? = nil) async throws(OIDCError) -> TokenSet {
        var form = [OAuthParameter("grant_type", "refresh_token"), OAuthParameter("refresh_token", refreshToken.revealedValue)]
        if let scopes, !scopes.isEmpty { form.append(OAuthParameter("scope", scopes.joined(separator: " "))) }
        return try await post(form, .grant(.refreshToken), to: try endpoint(provider.tokenEndpoint, "token endpoint")) {
            [self] (response: HTTPResponse) throws(OIDCError) -> TokenSet in
            try tokens(from: response, requestedScopes: scopes ?? [], grantType: GrantType.refreshToken.rawValue)
        }
    }

    /// The token set of a 200 answer, logged by its non-secret facts.
    func tokens(
        from response: HTTPResponse, requestedScopes: [String], grantType: String, acceptedTypes: [String] = ["Bearer"]
    ) throws(OIDCError) -> TokenSet {
        let tokens: TokenSet
        // The sender constraint decides what may come: with DPoP, a Bearer answer is a downgrade (RFC 9449 §5).
        let acceptedTypes = DPoP.acceptedTokenTypes(acceptedTypes, proving: dpop)
        do {
            tokens = try TokenSet(tokenResponse: response.body, requestedScopes: requestedScopes, receivedAt: now(), acceptedTypes: acceptedTypes)
        } catch {
            let error = DPoP.downgrade(error, proving: dpop)
            logger.debug("token response unreadable", metadata: Logger.Metadata.failure(error).merging(["grant_type": .string(grantType)]) { $1 })
            throw error
        }
        logger.debug(
            "tokens issued",
            metadata: [
                "grant_type": .string(grantType), "token_type": .untrusted(tokens.tokenType),
                "expires_in": tokens.expiresAt.map { .seconds($0.timeIntervalSince(tokens.receivedAt)) } ?? "none",
                "refresh_token": .bool(tokens.refreshToken != nil), "id_token": .bool(tokens.idToken != nil),
                "scope": .untrusted(tokens.scopes.joined(separator: " "), limit: 256),
            ]
        )
        return tokens
    }

    /// Revokes a token (RFC 7009). Revoking a refresh token usually ends the whole login.
    /// A token the provider does not know is not an error (§2.2).
    ///
    /// - Throws: `invalidArgument` when the provider has no revocation endpoint; otherwise as
    ///   ``exchangeCode(_:codeVerifier:redirectURI:scopes:)``.
    public func revoke(_ token: Secret, hint: TokenTypeHint? = nil) async throws(OIDCError) {
        var form = [OAuthParameter("token", token.revealedValue)]
        if let hint { form.append(OAuthParameter("token_type_hint", hint.rawValue)) }
        _ = try await post(form, .revocation, to: try endpoint(provider.revocationEndpoint, "revocation endpoint"))
        logger.debug("token revoked", metadata: ["token_type_hint": .string(hint?.rawValue ?? "none")])
    }

    /// Which kind of token ``revoke(_:hint:)`` is given (RFC 7009 §2.1).
    public enum TokenTypeHint: String, Sendable {
        /// `access_token`.
        case accessToken = "access_token"
        /// `refresh_token`.
        case refreshToken = "refresh_token"
    }

    /// The RP-initiated logout URL (OpenID Connect RP-Initiated Logout 1.0 §2) to open in the browser.
    ///
    /// - Throws: `invalidArgument` when the provider has no end-session endpoint.
    public func endSessionURL(idTokenHint: Secret?, postLogoutRedirectURI: String? = nil, state: String? = nil) throws(OIDCError) -> URL {
        let url = try endpoint(provider.endSessionEndpoint, "end-session endpoint")
        var parameters = [OAuthParameter("client_id", clientID)]
        if let idTokenHint { parameters.append(OAuthParameter("id_token_hint", idTokenHint.revealedValue)) }
        if let postLogoutRedirectURI { parameters.append(OAuthParameter("post_logout_redirect_uri", postLogoutRedirectURI)) }
        if let state { parameters.append(OAuthParameter("state", state)) }
        let query = parameters.map {
            PercentEncoding.encode($0.name, style: .uriComponent) + "=" + PercentEncoding.encode($0.value, style: .uriComponent)
        }.joined(separator: "&")
        let separator = url.query == nil ? "?" : "&"
        guard let result = URL(string: url.absoluteString + separator + query) else {
            throw .invalidArgument("The end-session URL could not be built.")
        }
        return result
    }

    // MARK: Requests

    func endpoint(_ url: URL?, _ role: String) throws(OIDCError) -> URL {
        guard let url else {
            throw .invalidArgument("The provider configuration has no \(role); set it, or use discovery.")
        }
        try EndpointURLPolicy.validate(url, role: role)
        return url
    }
}
