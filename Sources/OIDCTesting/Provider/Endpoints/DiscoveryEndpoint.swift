internal import OIDC
/// `/.well-known/openid-configuration` (OIDC Discovery §3) and RFC 8414's
/// `/.well-known/oauth-authorization-server`: the same document.
enum DiscoveryEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) -> ProviderResponse {
        guard request.method == "GET" else { return .methodNotAllowed("GET") }
        if context.configuration.metadataDocuments == .oauthOnly, request.path.hasSuffix(ProviderPaths.discovery) { return .notFound }
        return .json(document(context))
    }

    static func document(_ context: ProviderContext) -> [String: Any] {
        let issuer = context.issuer
        var scopes: Set<String> = ["openid", "profile", "email", "offline_access"]
        for client in context.clients { scopes.formUnion(client.allowedScopes ?? []) }
        // The mTLS methods only when the TLS layer asks for client certificates.
        let mutualTLSMethods: Set<TestProvider.ClientAuthentication> = [.tlsClientAuth, .selfSignedTLSClientAuth]
        let authMethods = TestProvider.ClientAuthentication.allCases
            .filter { context.configuration.mutualTLS != nil || !mutualTLSMethods.contains($0) }.map(\.rawValue)
        var document: [String: Any] = [
            "issuer": issuer,
            "response_types_supported": ["code"],
            "response_modes_supported": context.configuration.signedResponses == .offered ? ["query", "jwt", "query.jwt"] : ["query"],
            "grant_types_supported": [
                "authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange",
                "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:openid:params:grant-type:ciba",
            ],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": TestProvider.IDTokenAlgorithm.allCases.map(\.rawValue),
            "token_endpoint_auth_methods_supported": authMethods,
            "revocation_endpoint_auth_methods_supported": authMethods,
            "introspection_endpoint_auth_methods_supported": authMethods,
            "token_endpoint_auth_signing_alg_values_supported": JWSAlgorithm.allCases.map(\.rawValue),
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": scopes.sorted(),
            "claims_supported": [
                "iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "at_hash", "amr", "acr",
                "name", "email", "email_verified",
            ],
            "authorization_response_iss_parameter_supported": context.configuration.issuerParameterSupported,
            "request_parameter_supported": context.configuration.pushedAuthorizationRequests != .required,
            "request_object_signing_alg_values_supported": JWSAlgorithm.allCases.filter { !$0.isHMACAlgorithm }.map(\.rawValue),
            "require_signed_request_object": context.configuration.signedRequestObjects == .required,
            "request_uri_parameter_supported": false,
        ]
        for endpoint in ProviderEndpoint.allCases where context.configuration.advertises(endpoint) {
            document[endpoint.member] = issuer + ProviderPaths.path(of: endpoint)
        }
        switch context.configuration.pushedAuthorizationRequests {
        case .notOffered:
            break
        case .offered, .required:
            document["require_pushed_authorization_requests"] = context.configuration.pushedAuthorizationRequests == .required
        }
        document["backchannel_token_delivery_modes_supported"] = ["poll", "ping"]
        document["backchannel_user_code_parameter_supported"] = false
        if let types = context.configuration.authorizationDetailsTypes {
            document["authorization_details_types_supported"] = types.sorted()
        }
        if context.configuration.dpop.support != .notOffered {
            document["dpop_signing_alg_values_supported"] = context.configuration.dpop.algorithms.map(\.rawValue)
        }
        if context.configuration.signedResponses == .offered {
            document["authorization_signing_alg_values_supported"] = [context.configuration.idTokenAlgorithm.rawValue]
        }
        if let mutualTLS = context.configuration.mutualTLS {
            document["tls_client_certificate_bound_access_tokens"] = mutualTLS.bindsAccessTokens
            if let prefix = mutualTLS.aliasPathPrefix {
                var aliases: [String: String] = [:]
                for endpoint in ProviderEndpoint.aliased where document[endpoint.member] != nil {
                    aliases[endpoint.member] = issuer + prefix + ProviderPaths.path(of: endpoint)
                }
                document["mtls_endpoint_aliases"] = aliases
            }
        }
        ResourceEndpoints.amend(&document, context)
        return document
    }
}
