internal import Foundation
internal import OIDC
internal import OIDCResourceServer

/// The protected resource beside the provider (``TestProvider/ProtectedResource``): `/resource`,
/// `/resource/admin` (step-up) and its RFC 9728 metadata document.
enum ResourceEndpoints {
    /// `/resource` and `/resource/admin`: 200 with who the token belongs to, for a valid access
    /// token issued for this resource (its `aud`, unless ``TestProvider/ProtectedResource/requiresAudience``
    /// is off), DPoP-bound when ``TestProvider/ProtectedResource/requiresDPoP`` is on; 401 whose
    /// challenge names the metadata (`resource_metadata`) and, when configured, the `scope` to ask for; at `/resource/admin`, 403 `insufficient_scope` naming
    /// ``TestProvider/ProtectedResource/stepUpScope`` unless the token has it.
    static func resource(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "GET" || request.method == "POST" else { return .methodNotAllowed("GET, POST") }
        let options = context.configuration.protectedResource
        let paths = ResourcePaths(context)
        let named = options.challengeNamesMetadata ? #"resource_metadata="\#(paths.metadataURL(options.metadataLocation))""# : nil
        func unauthorized(_ error: String?, _ description: String) -> ProviderResponse {
            var parameters = [String]()
            if let error { parameters.append(#"error="\#(error)""#) }
            if let scope = options.challengeScope { parameters.append(#"scope="\#(scope)""#) }
            if let named { parameters.append(named) }
            var headers: [(name: String, value: String)] = []
            if let preceding = options.precedingChallenge { headers.append(("WWW-Authenticate", preceding)) }
            if options.requiresDPoP { parameters.append(#"algs="\#(context.configuration.dpop.algorithms.map(\.rawValue).joined(separator: " "))""#) }
            let scheme = options.requiresDPoP ? "DPoP" : "Bearer"
            headers.append(("WWW-Authenticate", ([scheme] + [parameters.joined(separator: ", ")]).filter { !$0.isEmpty }.joined(separator: " ")))
            // No error code in the body either when the challenge has none (RFC 6750 §3.1: no token came).
            var body = ["error_description": description]
            if let error { body["error"] = error }
            return .json(body, status: 401, noStore: true, extraHeaders: headers)
        }
        guard request.accessToken != nil else { return unauthorized(nil, "An access token is required.") }
        switch await BearerAuthentication.authenticate(request, endpoint: .resource, context) {
        case .failure(let refusal):
            // The provider's own challenge (Bearer or DPoP), with the metadata named.
            var response = refusal.response
            if let named {
                response.headers = response.headers.map { header in
                    header.name.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame ? (header.name, header.value + ", " + named) : header
                }
            }
            return response
        case .success(let valid):
            if options.requiresDPoP, valid.record.jkt == nil {
                return unauthorized("invalid_token", "This resource takes only DPoP-bound access tokens (RFC 9449).")
            }
            if options.requiresAudience, valid.record.audience != paths.resource {
                return unauthorized("invalid_token", "The access token was not issued for this resource (RFC 8707).")
            }
            let scopes = Set(valid.record.scope.split(separator: " ").map(String.init))
            if request.path == ResourcePaths.stepUp, !scopes.contains(options.stepUpScope) {
                var value = #"Bearer error="insufficient_scope", scope="\#(options.stepUpScope)""#
                if let named { value += ", " + named }
                return .json(
                    ["error": "insufficient_scope", "error_description": "This route needs the scope '\(options.stepUpScope)'."], status: 403,
                    noStore: true, extraHeaders: [("WWW-Authenticate", value)] + valid.headers)
            }
            var body = valid.user.profileClaims
            body["client_id"] = valid.record.clientID
            body["scope"] = valid.record.scope
            if let audience = valid.record.audience { body["aud"] = audience }
            return .json(body, noStore: true, extraHeaders: valid.headers)
        }
    }

    /// The RFC 9728 document, at the configured location only.
    static func metadata(_ request: ProviderRequest, _ context: ProviderContext) -> ProviderResponse {
        guard request.method == "GET" else { return .methodNotAllowed("GET") }
        let options = context.configuration.protectedResource
        guard ResourcePaths.metadataPath(options.metadataLocation) == request.path else { return .notFound }
        let paths = ResourcePaths(context)
        guard let resource = URL(string: options.advertisedResource ?? paths.resource) else { return .notFound }
        var document = ProtectedResourceMetadata(
            resource: resource, authorizationServers: options.authorizationServers ?? [context.issuer], scopesSupported: options.scopesSupported,
            dpopSigningAlgorithms: context.configuration.dpop.support == .notOffered ? [] : context.configuration.dpop.algorithms,
            dpopBoundAccessTokensRequired: options.requiresDPoP)
        document.resourceName = "TestProvider resource"
        return ProviderResponse(status: 200, headers: [("Content-Type", "application/json")], body: document.json)
    }

    /// What the authorization server's metadata says beyond the OpenID document: a plain OAuth
    /// server (``TestProvider/MetadataDocuments/oauthOnly``) publishes no `jwks_uri`, and a server
    /// that registers clients names `registration_endpoint` and, when it takes Client ID Metadata
    /// Documents, `client_id_metadata_document_supported`.
    static func amend(_ document: inout [String: Any], _ context: ProviderContext) {
        if context.configuration.metadataDocuments == .oauthOnly {
            document["jwks_uri"] = nil
            document["id_token_signing_alg_values_supported"] = nil
            document["subject_types_supported"] = nil
            document["claims_supported"] = nil
            document["scopes_supported"] = context.configuration.protectedResource.scopesSupported
        }
        if let registration = context.configuration.registration {
            document["registration_endpoint"] = context.issuer + RegistrationPaths.register
            if registration.clientIDMetadataDocuments { document["client_id_metadata_document_supported"] = true }
        }
    }
}

/// Where the resource and its metadata are, at the provider's origin (whatever its issuer path).
struct ResourcePaths {
    static let resource = "/resource"
    static let stepUp = "/resource/admin"
    static let wellKnown = "/.well-known/oauth-protected-resource"
    static let challengeOnly = "/metadata/resource"

    let origin: String

    init(_ context: ProviderContext) { origin = String(context.issuer.dropLast(context.configuration.issuerPath.count)) }
    init(origin: String) { self.origin = origin }

    /// The resource identifier: `{origin}/resource`.
    var resource: String { origin + Self.resource }

    func metadataURL(_ location: TestProvider.ProtectedResource.MetadataLocation) -> String { origin + Self.metadataPath(location) }

    static func metadataPath(_ location: TestProvider.ProtectedResource.MetadataLocation) -> String {
        switch location {
        case .pathInserted: wellKnown + resource
        case .root: wellKnown
        case .challengeOnly: challengeOnly
        }
    }

    /// The endpoint of a path at the origin, when it is one of these.
    static func endpoint(for path: String) -> TestProvider.Endpoint? {
        switch path {
        case resource, stepUp: .resource
        case wellKnown, wellKnown + resource, challengeOnly: .resourceMetadata
        default: nil
        }
    }
}
