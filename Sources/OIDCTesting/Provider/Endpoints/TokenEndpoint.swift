internal import OIDC

/// `/token` (RFC 6749 §3.2, §4.1.3, §4.4, §6, RFC 8693): `authorization_code` with PKCE,
/// `refresh_token`, `client_credentials`, the device code, the JWT bearer grant (RFC 7523) and token exchange.
/// Errors are RFC 6749 §5.2 JSON with `Cache-Control: no-store`; `invalid_client` is a 401 with
/// `WWW-Authenticate: Basic`.
///
/// A DPoP proof (RFC 9449 §5) is checked before anything else, so a refused proof or a nonce
/// challenge spends no code, refresh token or client assertion; every grant then binds its tokens
/// to the proof's key.
enum TokenEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "POST" else { return .methodNotAllowed("POST") }
        var proof: DPoPProofCheck.Accepted?
        switch context.configuration.dpop.support {
        case .notOffered:
            break
        case .accepted, .required:
            do { proof = try await DPoPProofCheck.check(request, endpoint: .token, context) } catch {
                return error.tokenEndpointResponse
            }
            if proof == nil, context.configuration.dpop.support == .required {
                return .oauthError(.invalidDPoPProof("This provider issues DPoP-bound tokens only: send a DPoP proof (RFC 9449)."))
            }
        }
        let headers = proof?.headers ?? []
        do {
            let tokens = try await grant(request, jkt: proof?.thumbprint, context)
            if context.configuration.mutualTLS?.bindsAccessTokens == true, tokens.tokenType == "Bearer", let certificate = request.clientCertificate {
                // RFC 8705 §3.1: bound to the certificate of the connection the token was asked over.
                guard let thumbprint = try? ClientCertificateCheck.thumbprint(der: certificate) else {
                    return .oauthError(OAuthError(code: "server_error", description: "The client certificate could not be hashed.", status: 500))
                }
                await context.state.bindAccessToken(tokens.accessToken, to: thumbprint)
            }
            return .json(tokens.json, noStore: true, extraHeaders: headers)
        } catch {
            return .oauthError(error, extraHeaders: headers)
        }
    }

    private static func grant(_ request: ProviderRequest, jkt: String?, _ context: ProviderContext) async throws(OAuthError) -> IssuedTokens {
        guard request.hasFormBody else {
            throw .invalidRequest("The token request must be application/x-www-form-urlencoded.")
        }
        let parameters: [OAuthParameter]
        do {
            parameters = try request.formParameters()
        } catch {
            throw .invalidRequest("The form body has a broken percent-encoding.")
        }
        if let name = parameters.firstDuplicateName {
            throw .invalidRequest("The parameter '\(name)' appears more than once.")
        }
        let client = try await ClientAuthenticator.authenticate(request, parameters, context)
        let resource = parameters["resource"]
        if let resource, !ResourceIndicator.isValid(resource) {
            throw OAuthError(code: "invalid_target", description: "resource must be an absolute URI without a fragment (RFC 8707 §2).")
        }
        guard let grantType = parameters.nonEmpty("grant_type") else { throw .invalidRequest("grant_type is missing.") }
        try RegisteredGrants.check(client, uses: grantType)
        switch grantType {
        case "authorization_code":
            guard let code = parameters.nonEmpty("code") else { throw .invalidRequest("code is missing.") }
            guard let redirectURI = parameters.nonEmpty("redirect_uri") else {
                throw .invalidRequest("redirect_uri is missing.")
            }
            return try await context.state.exchangeCode(
                code, client: client, redirectURI: redirectURI, codeVerifier: parameters["code_verifier"], jkt: jkt, resource: resource
            )
        case "refresh_token":
            guard let refreshToken = parameters.nonEmpty("refresh_token") else {
                throw .invalidRequest("refresh_token is missing.")
            }
            return try await context.state.refresh(
                refreshToken, client: client, scope: parameters.nonEmpty("scope"), jkt: jkt, resource: resource)
        case "urn:ietf:params:oauth:grant-type:device_code":
            guard let deviceCode = parameters.nonEmpty("device_code") else { throw .invalidRequest("device_code is missing.") }
            return try await context.state.pollDevice(
                deviceCode, client: client, codeVerifier: parameters["code_verifier"], jkt: jkt, resource: resource)
        case "client_credentials":
            let details = try AuthorizationDetailsCheck.check(parameters["authorization_details"], context.configuration)
            return try await context.state.clientCredentials(
                client: client, scope: parameters.nonEmpty("scope"), jkt: jkt, resource: resource, authorizationDetails: details)
        case GrantType.ciba.rawValue:
            guard let id = parameters.nonEmpty("auth_req_id") else { throw .invalidRequest("auth_req_id is missing.") }
            return try await context.state.pollBackchannel(id, client: client, jkt: jkt, resource: resource)
        case GrantType.jwtBearer.rawValue:
            guard let assertion = parameters.nonEmpty("assertion") else { throw .invalidRequest("assertion is missing.") }
            let subject = try await AssertionGrantCheck.subject(of: assertion, client: client, request, context)
            return try await context.state.jwtBearer(subject: subject, client: client, scope: parameters.nonEmpty("scope"), jkt: jkt, resource: resource)
        case "urn:ietf:params:oauth:grant-type:token-exchange":
            guard let subject = parameters.nonEmpty("subject_token"), let type = parameters.nonEmpty("subject_token_type") else {
                throw .invalidRequest("subject_token and subject_token_type are required.")
            }
            if parameters["actor_token"] != nil, parameters.nonEmpty("actor_token_type") == nil {
                throw .invalidRequest("actor_token_type is required with actor_token.")
            }
            if parameters["requested_token_type"] == TokenExchangeRequest.TokenType.identityAssertion {
                return try await context.state.identityAssertion(
                    subject: subject, subjectType: type, client: client, audience: parameters.nonEmpty("audience"), resource: resource,
                    scope: parameters.nonEmpty("scope"))
            }
            return try await context.state.exchangeToken(
                subject: subject, subjectType: type, client: client, scope: parameters.nonEmpty("scope"),
                requestedType: parameters.nonEmpty("requested_token_type"), jkt: jkt
            )
        default:
            throw OAuthError(
                code: "unsupported_grant_type",
                description: "Only authorization_code, refresh_token, client_credentials, the device code, the JWT bearer grant and token exchange are supported."
            )
        }
    }
}
