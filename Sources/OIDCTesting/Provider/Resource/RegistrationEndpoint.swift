internal import Foundation
internal import OIDC

/// `{issuer}/register`: dynamic client registration (RFC 7591 §3), and `{issuer}/register/{id}`,
/// the client configuration endpoint (RFC 7592) for `GET` and `DELETE` with the registration access token.
///
/// A registration names `redirect_uris` (absolute, no fragment) and may name
/// `token_endpoint_auth_method` (`none`, `client_secret_basic` (the default, §2), `client_secret_post`),
/// `grant_types` (`authorization_code` (the default), `refresh_token`, the device grant: the
/// client may use no other, `unauthorized_client` at the token and device authorization endpoints),
/// `response_types` (`code`), `application_type`, `client_name` and `scope`; other members are
/// ignored, as §2 allows. The answer (201) echoes the metadata with a new `client_id`, a secret for
/// a confidential client, and, when configured, a `registration_access_token` and
/// `registration_client_uri`. Errors are §3.2.2 JSON: `invalid_redirect_uri`, `invalid_client_metadata`.
enum RegistrationEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard let options = context.configuration.registration else { return .notFound }
        let base = String(context.issuer.dropLast(context.configuration.issuerPath.count)) + context.configuration.issuerPath + RegistrationPaths.register
        let origin = String(context.issuer.dropLast(context.configuration.issuerPath.count))
        if origin + request.path != base {
            return await configuration(request, id: String((origin + request.path).dropFirst(base.count + 1)), context)
        }
        guard request.method == "POST" else { return .methodNotAllowed("POST") }
        let mediaType = (request.header("Content-Type") ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/json" else {
            return refusal("invalid_client_metadata", "The registration request must be application/json.")
        }
        let metadata: [String: JSONValue]
        do { metadata = try StrictJSONParser.parseObject(request.body, maximumDepth: 8) } catch {
            return refusal("invalid_client_metadata", "The registration request is not a valid JSON object.")
        }
        let redirectURIs = metadata["redirect_uris"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard !redirectURIs.isEmpty, redirectURIs.count == metadata["redirect_uris"]?.arrayValue?.count, redirectURIs.count <= 8 else {
            return refusal("invalid_redirect_uri", "redirect_uris must be a non-empty array of at most 8 strings.")
        }
        for uri in redirectURIs {
            guard let components = URLComponents(string: uri), components.scheme != nil, components.host != nil, components.fragment == nil else {
                return refusal("invalid_redirect_uri", "Every redirect URI must be an absolute URI without a fragment.")
            }
        }
        let method = metadata["token_endpoint_auth_method"]?.stringValue ?? "client_secret_basic"
        let authentication: TestProvider.ClientAuthentication
        switch method {
        case "none": authentication = .none
        case "client_secret_basic": authentication = .clientSecretBasic
        case "client_secret_post": authentication = .clientSecretPost
        default: return refusal("invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post.")
        }
        let grantTypes = metadata["grant_types"]?.arrayValue?.compactMap(\.stringValue) ?? ["authorization_code"]
        let known: Set<String> = ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]
        guard !grantTypes.isEmpty, grantTypes.allSatisfy(known.contains) else {
            return refusal("invalid_client_metadata", "grant_types may name authorization_code, refresh_token and the device grant only.")
        }
        let responseTypes = metadata["response_types"]?.arrayValue?.compactMap(\.stringValue) ?? ["code"]
        guard responseTypes == ["code"] else { return refusal("invalid_client_metadata", "response_types must be [\"code\"].") }
        do {
            let id = try ProviderState.randomToken()
            let secret = authentication == .none ? nil : try ProviderState.randomToken()
            var client = TestProvider.Client(id: id, secret: secret, authentication: authentication, redirectURIs: redirectURIs)
            client.matchesLoopbackPortExactly = options.exactLoopbackPort
            client.registeredGrantTypes = Set(grantTypes)
            let accessToken = options.issuesRegistrationAccessToken ? try ProviderState.randomToken() : nil
            await context.state.register(client, accessToken: accessToken)
            var answer: [String: Any] = [
                "client_id": id, "client_id_issued_at": Int(await context.state.now.timeIntervalSince1970),
                "redirect_uris": redirectURIs, "token_endpoint_auth_method": method, "grant_types": grantTypes, "response_types": responseTypes,
            ]
            for name in ["application_type", "client_name", "scope"] { if let value = metadata[name]?.stringValue { answer[name] = value } }
            if let secret {
                answer["client_secret"] = secret
                answer["client_secret_expires_at"] = 0
            }
            if let accessToken {
                answer["registration_access_token"] = accessToken
                answer["registration_client_uri"] = base + "/" + id
            }
            return .json(answer, status: 201, noStore: true)
        } catch {
            return .oauthError(error)
        }
    }

    /// RFC 7592 with the registration access token: `GET` reads the client's metadata (§2.1: 200,
    /// with a new registration access token when ``TestProvider/Registration/rotatesRegistrationAccessToken``
    /// is on); `DELETE` forgets the client (§2.3: 204). An unknown client or another token gets 401
    /// `invalid_token` (§2.1: the client does not exist).
    private static func configuration(_ request: ProviderRequest, id: String, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "DELETE" || request.method == "GET" else { return .methodNotAllowed("GET, DELETE") }
        await context.state.countRegistrationRead(request.method)
        guard let (scheme, token) = request.accessToken, scheme == "bearer", let client = await context.state.registeredClient(id, accessToken: token) else {
            return .json(["error": "invalid_token"], status: 401, noStore: true, extraHeaders: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
        }
        guard request.method == "GET" else {
            await context.state.unregister(id)
            return ProviderResponse(status: 204, headers: ProviderResponse.noStore)
        }
        var answer: [String: Any] = [
            "client_id": client.id, "redirect_uris": client.redirectURIs, "registration_client_uri": context.issuer + RegistrationPaths.register + "/" + id,
            "token_endpoint_auth_method": client.authentication == .none ? "none" : "client_secret_basic",
        ]
        if context.configuration.registration?.rotatesRegistrationAccessToken == true {
            do {
                let rotated = try ProviderState.randomToken()
                await context.state.register(client, accessToken: rotated, counted: false)
                answer["registration_access_token"] = rotated
            } catch {
                return .oauthError(error)
            }
        } else {
            answer["registration_access_token"] = token
        }
        if let secret = client.secret { answer["client_secret"] = secret.revealedValue }
        return .json(answer, noStore: true)
    }

    private static func refusal(_ code: String, _ description: String) -> ProviderResponse {
        .json(["error": code, "error_description": description], status: 400, noStore: true)
    }
}

enum RegistrationPaths {
    static let register = "/register"
}
