internal import Foundation
internal import OIDC

/// Routes a request to its endpoint's handler, after counting it and playing any queued fault.
struct Router: Sendable {
    let configuration: TestProvider.Configuration
    let state: ProviderState

    func handle(_ request: ProviderRequest) async -> ProviderResponse {
        var response = await route(request)
        let now = await state.now
        response.headers.append(("Date", Self.httpDate(now)))
        return response
    }

    private func route(_ request: ProviderRequest) async -> ProviderResponse {
        let alias = ProviderPaths.aliasedEndpoint(
            for: request.path, issuerPath: configuration.issuerPath, prefix: configuration.mutualTLS?.aliasPathPrefix)
        guard let endpoint = alias ?? ProviderPaths.endpoint(for: request.path, issuerPath: configuration.issuerPath) else {
            return .notFound
        }
        if alias != nil { await state.recordAliasRequest(endpoint) }
        var grantType: String?
        var formParameters: [String: String]?
        if request.method == "GET", endpoint == .authorize, request.path.hasSuffix(ProviderPaths.authorize),
            let parameters = try? request.queryParameters()
        {
            var query: [String: String] = [:]
            for parameter in parameters where query[parameter.name] == nil { query[parameter.name] = parameter.value }
            formParameters = query
        } else if request.method == "POST", request.hasFormBody, let parameters = try? request.formParameters() {
            if endpoint == .token, !parameters.isRepeated("grant_type") { grantType = parameters.nonEmpty("grant_type") }
            var form: [String: String] = [:]
            for parameter in parameters where form[parameter.name] == nil { form[parameter.name] = parameter.value }
            formParameters = form
        }
        let fault = await state.recordRequest(endpoint, grantType: grantType, formParameters: formParameters)
        switch fault {
        case .delay(let duration):
            try? await Task.sleep(for: duration)
        case .downgradeToBearer:
            return Self.downgradingTokenType(await dispatch(request, to: endpoint))
        case let fault?:
            if let response = fault.response { return response }
        case nil:
            break
        }
        return await dispatch(request, to: endpoint)
    }

    private func dispatch(_ request: ProviderRequest, to endpoint: TestProvider.Endpoint) async -> ProviderResponse {
        var configuration = self.configuration
        configuration.clients += await state.registeredClients
        let context = ProviderContext(issuer: await state.issuer, configuration: configuration, state: state)
        switch endpoint {
        case .discovery: return DiscoveryEndpoint.handle(request, context)
        case .jwks: return await JWKSEndpoint.handle(request, context)
        case .authorize: return await AuthorizeEndpoint.handle(request, context)
        case .token: return await TokenEndpoint.handle(request, context)
        case .userinfo: return await UserinfoEndpoint.handle(request, context)
        case .revocation: return await RevocationEndpoint.handle(request, context)
        case .introspection: return await IntrospectionEndpoint.handle(request, context)
        case .deviceAuthorization: return await DeviceEndpoints.authorize(request, context)
        case .deviceVerification: return await DeviceEndpoints.verification(request, context)
        case .endSession: return await EndSessionEndpoint.handle(request, context)
        case .pushedAuthorization: return await PushedAuthorizationEndpoint.handle(request, context)
        case .backchannelAuthentication: return await BackchannelEndpoint.handle(request, context)
        case .protectedResource: return await ProtectedResourceEndpoint.handle(request, context)
        case .registration: return await RegistrationEndpoint.handle(request, context)
        case .resource: return await ResourceEndpoints.resource(request, context)
        case .resourceMetadata: return ResourceEndpoints.metadata(request, context)
        }
    }

    /// `response` with its JSON body's `token_type`, if any, made `Bearer` (``TestProvider/Fault/downgradeToBearer``).
    static func downgradingTokenType(_ response: ProviderResponse) -> ProviderResponse {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any], object["token_type"] != nil else {
            return response
        }
        object["token_type"] = "Bearer"
        guard let body = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return response
        }
        var downgraded = response
        downgraded.body = Array(body)
        return downgraded
    }

    /// RFC 9110 §5.6.7 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ date: Date) -> String { HTTPDate.format(date) }
}

extension TestProvider.Fault {
    /// The canned answer of a fault; `nil` for those that answer normally (``delay(_:)`` later,
    /// ``downgradeToBearer`` altered).
    var response: ProviderResponse? {
        switch self {
        case .serviceUnavailable:
            return .text("Service Unavailable", status: 503, extraHeaders: [("Retry-After", "1")])
        case .invalidGrant:
            return .oauthError(.invalidGrant("Injected fault: the grant is invalid."))
        case .oauthError(let code, let status):
            return .oauthError(OAuthError(code: code, description: "Injected fault.", status: status))
        case .delay, .downgradeToBearer:
            return nil
        case .problemJSON(let status):
            let object: [String: Any] = [
                "type": "https://example.com/problems/injected", "title": "Injected problem",
                "status": status, "detail": "The test provider was told to fail this request.",
            ]
            var response = ProviderResponse.json(object, status: status, noStore: true)
            response.headers[0] = ("Content-Type", "application/problem+json")
            return response
        case .htmlError(let status):
            return .html(HTML.errorPage("Error \(status)", "The upstream server answered with an error."), status: status)
        case .emptyBody(let status):
            return ProviderResponse(status: status, headers: ProviderResponse.noStore)
        case .truncatedJSON:
            return ProviderResponse(
                status: 200, headers: [("Content-Type", "application/json")] + ProviderResponse.noStore,
                body: Array(#"{"access_token":"truncated","token_type":"Bea"#.utf8)
            )
        case .oversizedBody(let byteCount):
            let prefix = #"{"access_token":"oversized","token_type":"Bearer","padding":""#
            let padding = [UInt8](repeating: UInt8(ascii: "x"), count: max(0, byteCount - prefix.utf8.count - 2))
            return ProviderResponse(
                status: 200, headers: [("Content-Type", "application/json")] + ProviderResponse.noStore,
                body: Array(prefix.utf8) + padding + Array(#""}"#.utf8)
            )
        case .dropConnection:
            var response = ProviderResponse(status: 500)
            response.dropsConnection = true
            return response
        }
    }
}
