internal import OIDC

/// `/authorize` (RFC 6749 §4.1.1, OIDC Core §3.1.2): validates the request, then signs the
/// configured user in, answers with the configured error, or shows the login page.
///
/// A request whose client or redirect URI cannot be trusted gets an HTML 400 page and is never
/// redirected (RFC 6749 §4.1.2.1); every other error is redirected with `error=`.
enum AuthorizeEndpoint {
    /// Why a request was refused, and how the refusal travels.
    enum Refusal: Error {
        /// An HTML page; nothing is redirected.
        case page(String, String)
        /// A redirect to the (validated) redirect URI with `error`.
        case redirect(to: String, state: String?, OAuthError)
    }

    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        if request.path.hasSuffix(ProviderPaths.authorizeConfirm) {
            return await LoginPage.confirm(request, context)
        }
        let given: [OAuthParameter]
        do {
            switch request.method {
            case "GET":
                given = try request.queryParameters()
            case "POST" where request.hasFormBody:
                given = try request.formParameters()
            case "POST":
                return .html(HTML.errorPage("invalid_request", "A POSTed authorization request must be a form."), status: 400)
            default:
                return .methodNotAllowed("GET, POST")
            }
        } catch {
            return .html(HTML.errorPage("invalid_request", "The request has a broken percent-encoding."), status: 400)
        }
        let parameters: [OAuthParameter]
        switch await resolveParameters(given, context) {
        case .success(let resolved): parameters = resolved
        case .failure(.page(let error, let description)): return .html(HTML.errorPage(error, description), status: 400)
        case .failure(.redirect(let uri, let state, let error)): return await errorRedirect(to: uri, state: state, error, context)
        }
        let signedFor = signedResponseClient(parameters, context)

        let authorization: ValidatedAuthorization
        switch validate(parameters, context) {
        case .success(let validated):
            authorization = validated
        case .failure(.page(let error, let description)):
            return .html(HTML.errorPage(error, description), status: 400)
        case .failure(.redirect(let uri, let state, let error)):
            return await errorRedirect(to: uri, state: state, error, context, signedFor: signedFor)
        }

        switch context.configuration.authorizeBehaviour {
        case .signIn:
            return await signIn(authorization, context)
        case .error(let code, let description):
            return await errorRedirect(
                to: authorization.redirectURI, state: authorization.state, OAuthError(code: code, description: description),
                context, signedFor: authorization.signedResponseClient
            )
        case .loginPage:
            do {
                let id = try await context.state.parkLogin(authorization)
                return LoginPage.page(requestID: id, user: await context.state.user, authorization, context)
            } catch {
                return await errorRedirect(
                    to: authorization.redirectURI, state: authorization.state, error, context, signedFor: authorization.signedResponseClient)
            }
        }
    }

    /// Issues a code for the configured user and redirects with `code`, `state` and `iss` (signed,
    /// when the request asked for JARM).
    static func signIn(_ authorization: ValidatedAuthorization, _ context: ProviderContext) async -> ProviderResponse {
        do {
            let code = try await context.state.issueCode(for: authorization)
            var parameters = [OAuthParameter("code", code)]
            if let state = authorization.state { parameters.append(OAuthParameter("state", state)) }
            if context.configuration.issuerParameterSupported { parameters.append(OAuthParameter("iss", context.issuer)) }
            return await redirect(to: authorization.redirectURI, parameters, signedFor: authorization.signedResponseClient, context)
        } catch {
            return await errorRedirect(
                to: authorization.redirectURI, state: authorization.state, error, context, signedFor: authorization.signedResponseClient)
        }
    }

    /// RFC 6749 §4.1.2.1: `error`, `error_description`, `state`, and `iss` (RFC 9207); signed for
    /// `signedFor`, the client, when the request asked for JARM.
    static func errorRedirect(
        to uri: String, state: String?, _ error: OAuthError, _ context: ProviderContext, signedFor clientID: String? = nil
    ) async -> ProviderResponse {
        var parameters = [OAuthParameter("error", error.code)]
        if let description = error.description { parameters.append(OAuthParameter("error_description", description)) }
        if let state { parameters.append(OAuthParameter("state", state)) }
        if context.configuration.issuerParameterSupported { parameters.append(OAuthParameter("iss", context.issuer)) }
        return await redirect(to: uri, parameters, signedFor: clientID, context)
    }

    /// A redirect with `parameters` in the query, or, for `clientID`'s request that asked for JARM,
    /// with only `response`, the signed response (JARM §2.1).
    static func redirect(to uri: String, _ parameters: [OAuthParameter], signedFor clientID: String?, _ context: ProviderContext) async -> ProviderResponse {
        guard let clientID else { return .redirect(to: uri, adding: parameters) }
        do {
            return .redirect(to: uri, adding: try await context.state.signedResponse(parameters, clientID: clientID))
        } catch {
            return .html(HTML.errorPage("server_error", "The provider could not sign its response."), status: 500)
        }
    }

    /// The client a signed response (JARM) is for: the request's, when it asked for
    /// `response_mode=jwt` or `query.jwt` and the provider offers them.
    static func signedResponseClient(_ parameters: [OAuthParameter], _ context: ProviderContext) -> String? {
        guard context.configuration.signedResponses == .offered, let mode = parameters["response_mode"],
            signedResponseModes.contains(mode), !parameters.isRepeated("client_id"), let clientID = parameters.nonEmpty("client_id"),
            context.client(clientID) != nil
        else { return nil }
        return clientID
    }

    /// The response modes of JARM §2.3 whose answer goes in the query.
    static let signedResponseModes: Set<String> = ["jwt", "query.jwt"]

    /// The checks, in the order that decides between an error page and an error redirect.
    static func validate(_ parameters: [OAuthParameter], _ context: ProviderContext) -> Result<ValidatedAuthorization, Refusal> {
        guard !parameters.isRepeated("client_id"), let clientID = parameters.nonEmpty("client_id") else {
            return .failure(.page("invalid_request", "client_id is missing or repeated."))
        }
        guard let client = context.client(clientID) else {
            return .failure(.page("invalid_client", "The client is not registered at this provider."))
        }
        guard !parameters.isRepeated("redirect_uri"), let redirectURI = parameters.nonEmpty("redirect_uri") else {
            return .failure(.page("invalid_request", "redirect_uri is missing or repeated."))
        }
        guard RedirectURIMatching.matches(client, presented: redirectURI) else {
            return .failure(.page("invalid_request", "The redirect URI is not registered for this client."))
        }
        let state = parameters.isRepeated("state") ? nil : parameters.nonEmpty("state")
        func refuse(_ code: String, _ description: String) -> Result<ValidatedAuthorization, Refusal> {
            .failure(.redirect(to: redirectURI, state: state, OAuthError(code: code, description: description)))
        }
        if let name = parameters.firstDuplicateName {
            return refuse("invalid_request", "The parameter '\(name)' appears more than once.")
        }
        guard let responseType = parameters.nonEmpty("response_type") else {
            return refuse("invalid_request", "response_type is missing.")
        }
        guard responseType == "code" else {
            return refuse("unsupported_response_type", "Only response_type=code is supported.")
        }
        let responseMode = parameters["response_mode"]
        if let mode = responseMode, mode != "query" {
            guard context.configuration.signedResponses == .offered, signedResponseModes.contains(mode) else {
                return refuse(
                    "invalid_request",
                    context.configuration.signedResponses == .offered
                        ? "Only response_mode=query, jwt and query.jwt are supported." : "Only response_mode=query is supported.")
            }
        }
        let scope = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        if let allowed = client.allowedScopes, let refused = scope.first(where: { !allowed.contains($0) }) {
            return refuse("invalid_scope", "The scope value '\(refused)' is not allowed for this client.")
        }
        let challenge = parameters["code_challenge"]
        let method = parameters["code_challenge_method"]
        switch (challenge, method) {
        case (nil, nil):
            if client.isPublic {
                return refuse("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.")
            }
        case (nil, .some):
            return refuse("invalid_request", "code_challenge_method was sent without code_challenge.")
        case (.some, nil), (.some, .some("plain")):
            return refuse("invalid_request", "Only code_challenge_method=S256 is accepted; plain is refused.")
        case (.some(let challenge), .some(let method)):
            guard method == "S256" else {
                return refuse("invalid_request", "Unsupported code_challenge_method; use S256.")
            }
            guard challenge.utf8.count == 43, Base64URLEncoding.decode(challenge)?.count == 32 else {
                return refuse("invalid_request", "code_challenge must be BASE64URL(SHA-256(verifier)): 43 characters.")
            }
        }
        var dpopJKT: String?
        if context.configuration.dpop.support != .notOffered, let jkt = parameters["dpop_jkt"] {
            guard jkt.utf8.count == 43, Base64URLEncoding.decode(jkt)?.count == 32 else {
                return refuse("invalid_request", "dpop_jkt must be a JWK SHA-256 thumbprint (RFC 9449 §10): 43 base64url characters.")
            }
            dpopJKT = jkt
        }
        let resource = parameters["resource"]
        if let resource, !ResourceIndicator.isValid(resource) {
            return refuse("invalid_target", "resource must be an absolute URI without a fragment (RFC 8707 §2).")
        }
        let details: AuthorizationDetails?
        do { details = try AuthorizationDetailsCheck.check(parameters["authorization_details"], context.configuration) } catch {
            return refuse(error.code, error.description ?? "authorization_details is refused.")
        }
        return .success(
            ValidatedAuthorization(
                client: client, redirectURI: redirectURI, scope: scope.joined(separator: " "), state: state,
                nonce: parameters.nonEmpty("nonce"), codeChallenge: challenge, dpopJKT: dpopJKT,
                signedResponseClient: responseMode.map(signedResponseModes.contains) == true ? clientID : nil, resource: resource,
                authorizationDetails: details
            )
        )
    }
}
