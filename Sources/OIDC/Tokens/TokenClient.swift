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
    /// Sender-constrains the tokens with DPoP (RFC 9449) when set: every token request and pushed
    /// authorization request carries a fresh proof, one `use_dpop_nonce` challenge gets one retry
    /// with the new nonce, and a token response must be of `token_type` `DPoP` (a `Bearer` answer
    /// is a downgrade, refused). `nil` (the default): bearer tokens.
    public var dpop: DPoP?

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
        let response = try await post(form, to: try endpoint(provider.tokenEndpoint, "token endpoint"), what: "token endpoint", grantType: "authorization_code")
        return try tokens(from: response, requestedScopes: scopes, grantType: "authorization_code")
    }

    /// Refreshes (RFC 6749 §6). The result keeps nothing of the old set: merge it with
    /// ``TokenSet/refreshed(with:)``, which keeps the old refresh token when the provider sent none.
    ///
    /// - Throws: as ``exchangeCode(_:codeVerifier:redirectURI:scopes:)``; `providerError` with
    ///   `invalid_grant` means the refresh token is dead: log the user out.
    public func refresh(_ refreshToken: Secret, scopes: [String]? = nil) async throws(OIDCError) -> TokenSet {
        var form = [OAuthParameter("grant_type", "refresh_token"), OAuthParameter("refresh_token", refreshToken.revealedValue)]
        if let scopes, !scopes.isEmpty { form.append(OAuthParameter("scope", scopes.joined(separator: " "))) }
        let response = try await post(form, to: try endpoint(provider.tokenEndpoint, "token endpoint"), what: "token endpoint", grantType: "refresh_token")
        return try tokens(from: response, requestedScopes: scopes ?? [], grantType: "refresh_token")
    }

    /// The token set of a 200 answer, logged by its non-secret facts.
    func tokens(
        from response: HTTPResponse, requestedScopes: [String], grantType: String, acceptedTypes: [String] = ["Bearer"]
    ) throws(OIDCError) -> TokenSet {
        let tokens: TokenSet
        // Asked for DPoP, only DPoP will do: a Bearer answer would send the token unbound (RFC 9449 §5).
        let acceptedTypes = dpop == nil ? acceptedTypes : acceptedTypes.contains("N_A") ? ["DPoP", "N_A"] : ["DPoP"]
        do {
            tokens = try TokenSet(tokenResponse: response.body, requestedScopes: requestedScopes, receivedAt: now(), acceptedTypes: acceptedTypes)
        } catch {
            var error = error
            if dpop != nil, let type = error.context["token_type"] {
                error = OIDCError(
                    .senderConstraintMissing,
                    "DPoP was asked for, and the provider answered with a token of type '\(type)': an unbound token is refused (RFC 9449 §5). Register the client for DPoP-bound tokens at the provider, or turn DPoP off.",
                    context: ["token_type": type]
                )
            }
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
        _ = try await post(form, to: try endpoint(provider.revocationEndpoint, "revocation endpoint"), what: "revocation endpoint", request: "revocation")
        logger.debug("token revoked", metadata: ["token_type_hint": .string(hint?.rawValue ?? "none")])
    }

    /// Which kind of token ``revoke(_:hint:)`` is given (RFC 7009 §2.1).
    public enum TokenTypeHint: String, Sendable {
        /// `access_token`.
        case accessToken = "access_token"
        /// `refresh_token`.
        case refreshToken = "refresh_token"
    }

    /// The user's claims from the userinfo endpoint (OIDC Core §5.3), with the access token.
    ///
    /// - Parameters:
    ///   - accessToken: the access token, sent as `Authorization: Bearer`, or `Authorization: DPoP` with a proof when ``dpop`` is set (one retry on a nonce challenge).
    ///   - expectedSubject: the verified ID token's `sub`; the answer's `sub` must equal it
    ///     (§5.3.2: otherwise the response must not be used).
    /// - Throws: `invalidClaim` (category security) when `sub` is missing or differs;
    ///   `providerError` with `invalid_token` when the access token is refused (401);
    ///   `malformedResponse` for a signed (JWT) answer, which is not supported yet, or a body that
    ///   is not a JSON object.
    public func userinfo(accessToken: Secret, expectedSubject: String) async throws(OIDCError) -> [String: JSONValue] {
        let url = try endpoint(provider.userinfoEndpoint, "userinfo endpoint")
        var headers = HTTPHeaders()
        headers.add("Authorization", (dpop == nil ? "Bearer " : "DPoP ") + accessToken.revealedValue)
        headers.add("Accept", "application/json")
        logger.debug("requesting userinfo", metadata: ["endpoint": .endpoint(url)])
        let request = HTTPRequest(method: "GET", url: url, headers: headers)
        var response = try await transport.send(try dpop?.signing(request, accessToken: accessToken) ?? request, options: requestOptions)
        if let dpop, dpop.nonceChallenged(response, to: url) {
            response = try await transport.send(try dpop.signing(request, accessToken: accessToken), options: requestOptions)
            _ = dpop.nonceChallenged(response, to: url)
        }
        guard response.status == 200 else {
            logger.debug("userinfo refused", metadata: ["endpoint": .endpoint(url), "status": .int(response.status)])
            if response.status == 401, let error = Self.challengeError(response) {
                // RFC 6750 §3: the error comes in the challenge, not the body.
                let details = OIDCError.ProviderError(error: error, errorDescription: nil)
                throw OIDCError(
                    .providerError, "The userinfo endpoint refused the access token (\(UntrustedText.sanitized(error, limit: 64))); refresh it or log in again.",
                    context: ["status": "401", "error": UntrustedText.sanitized(error, limit: 64)], providerError: details
                )
            }
            throw HTTPErrorMapping.unexpectedStatus(response, endpoint: url, what: "userinfo endpoint", secrets: [accessToken.revealedValue])
        }
        if let type = response.headers["Content-Type"]?.lowercased(), type.hasPrefix("application/jwt") {
            throw OIDCError(.malformedResponse, "The userinfo endpoint answered with a signed JWT, which this library does not accept yet; ask for JSON.")
        }
        let claims: [String: JSONValue]
        do { claims = try StrictJSONParser.parseObject(response.body) } catch {
            throw OIDCError(.malformedResponse, "The userinfo answer is not a valid JSON object (\(error)).")
        }
        guard let subject = claims["sub"]?.stringValue else {
            throw OIDCError(.invalidClaim, "The userinfo answer has no 'sub'; it must not be used (OIDC Core §5.3.2).", context: ["claim": "sub"])
        }
        if !ConstantTime.equals(subject, expectedSubject) {
            throw OIDCError(
                .invalidClaim, "The userinfo answer is about another user than the ID token (sub differs); it must not be used (OIDC Core §5.3.2).",
                context: ["claim": "sub"]
            )
        }
        return claims
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

    /// A form POST with client authentication and the provider's headers; anything but 200 is thrown,
    /// unless `passing` takes it (a device poll's `authorization_pending`, say). `grantType` (a
    /// token request) or `request` (`revocation`, `introspection`, …) names it in logs.
    func post(
        _ form: [OAuthParameter], to url: URL, what: String, grantType: String? = nil, request kind: String = "token",
        passing: (HTTPResponse) -> Bool = { _ in false }
    ) async throws(OIDCError) -> HTTPResponse {
        if authentication.method.isMutualTLS, !transport.presentsClientCertificate {
            throw .invalidArgument(
                "The client authenticates with \(authentication.method.rawValue), and its transport presents no TLS client certificate; give one (NIOHTTPTransport.Configuration.clientCertificate, oidc --client-certificate and --client-key)."
            )
        }
        // What is logged is chosen here, by name, from what is not secret: never the form or the headers.
        // Built only inside the log calls' autoclosures, so only for a level the handler takes.
        let method = authentication.method
        func purpose() -> Logger.Metadata {
            var purpose: Logger.Metadata = ["endpoint": .endpoint(url), "client_authentication": .string(method.rawValue)]
            if let grantType { purpose["grant_type"] = .string(grantType) } else { purpose["request"] = .string(kind) }
            return purpose
        }
        // Proofs go to the token endpoint and with pushed requests (RFC 9449 §5, §10.1), not to
        // revocation or introspection, which RFC 9449 leaves alone.
        let proving = grantType != nil || kind == "pushed_authorization" ? dpop : nil
        var attempt = 1
        while true {
            var signed = form
            let request = try authenticatedRequest(&signed, to: url, proving: proving)
            logger.debug("token endpoint request", metadata: purpose())
            let start = logger.logLevel <= .debug ? ContinuousClock.now : nil
            let response: HTTPResponse
            do { response = try await transport.send(request, options: requestOptions) } catch {
                logger.debug("token endpoint unreachable", metadata: purpose().merging(.failure(error)) { $1 })
                throw error
            }
            if let proving, proving.nonceChallenged(response, to: url), attempt == 1 {
                // A new nonce: the code or refresh token was not spent (RFC 9449 §8); once more with it.
                logger.debug("token endpoint asked for a DPoP nonce; retrying once", metadata: purpose())
                attempt += 1
                continue
            }
            guard response.status == 200 || passing(response) else {
                let secrets = signed.filter { Self.secretParameters.contains($0.name) }.map(\.value) + [clientSecret?.revealedValue].compactMap { $0 }
                let error = HTTPErrorMapping.unexpectedStatus(response, endpoint: url, what: what, secrets: secrets, authentication: authentication)
                logger.debug("token endpoint refused the request", metadata: purpose().merging(.failure(error)) { $1 })
                throw error
            }
            if let start {
                logger.trace(
                    "token endpoint answered", metadata: purpose().merging(["status": .int(response.status), "duration_ms": .milliseconds(since: start)]) { $1 })
            }
            return response
        }
    }

    /// The form POST of `form` (completed with the client's authentication: a fresh assertion on
    /// each call) with the provider's headers and, when `proving`, a fresh DPoP proof.
    private func authenticatedRequest(_ form: inout [OAuthParameter], to url: URL, proving: DPoP?) throws(OIDCError) -> HTTPRequest {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/x-www-form-urlencoded")
        headers.add("Accept", "application/json")
        for header in provider.tokenRequestHeaders { headers.add(header.name, header.value) }
        try authentication.authenticate(&form, headers: &headers, clientID: clientID, endpoint: url, issuer: provider.issuer, now: now())
        let request = HTTPRequest(method: "POST", url: url, headers: headers, body: Array(FormURLEncoding.encode(form).utf8))
        return try proving?.signing(request) ?? request
    }

    /// Form parameters whose values are secrets.
    static let secretParameters: Set<String> = [
        "code", "code_verifier", "refresh_token", "client_secret", "client_assertion", "token", "subject_token", "actor_token",
        "device_code",
    ]

    /// The `error` of a `Bearer` (RFC 6750 §3) or `DPoP` (RFC 9449 §7.1) challenge of a 401.
    static func challengeError(_ response: HTTPResponse) -> String? {
        for field in response.headers.values("WWW-Authenticate") {
            for challenge in AuthenticationChallenge.parse(field) {
                let scheme = challenge.scheme.lowercased()
                if scheme == "bearer" || scheme == "dpop", let error = challenge.parameters["error"] { return error }
            }
        }
        return nil
    }
}
