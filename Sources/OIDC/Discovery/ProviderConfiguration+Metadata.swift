internal import Foundation

extension ProviderConfiguration {
    /// This configuration (a preset such as ``swan``) with the provider's discovered metadata laid
    /// under it: the metadata's issuer and endpoints (authorization, token, JWKS, userinfo,
    /// revocation, end-session, device authorization, introspection, pushed authorization requests,
    /// and their mutual-TLS aliases, RFC 8705 §5), its RFC 9207 promise, whether it requires pushed
    /// requests and whether it binds tokens to client certificates, its response modes and JARM
    /// algorithms, each endpoint falling back to this
    /// configuration's where the metadata has none; this configuration's quirks kept (client
    /// authentication method, extra token-request headers, issuer matching, default scopes).
    ///
    /// ``RelyingParty/discover(issuer:clientID:clientSecret:preset:transport:requestOptions:logger:configuration:)`` does this
    /// when given a preset.
    public func merging(_ metadata: ProviderMetadata) -> ProviderConfiguration {
        var merged = self
        merged.issuer = metadata.issuer
        for endpoint in ProviderEndpoint.allCases {
            merged[keyPath: endpoint.configuration] = metadata.endpoints[endpoint] ?? self[keyPath: endpoint.configuration]
        }
        merged.requiresPushedAuthorizationRequests =
            metadata.advertised.requirePushedAuthorizationRequests || requiresPushedAuthorizationRequests
        merged.requiresSignedRequestObjects = metadata.advertised.requireSignedRequestObject || requiresSignedRequestObjects
        merged.requestObjectSigningAlgorithms = metadata.advertised.requestObjectSigningAlgValuesSupported ?? requestObjectSigningAlgorithms
        merged.dpopSigningAlgorithms = metadata.advertised.dpopSigningAlgValuesSupported ?? dpopSigningAlgorithms
        merged.responseModesSupported = metadata.advertised.responseModesSupported ?? responseModesSupported
        merged.authorizationSigningAlgorithms = metadata.advertised.authorizationSigningAlgValuesSupported ?? authorizationSigningAlgorithms
        merged.codeChallengeMethodsSupported = metadata.advertised.codeChallengeMethodsSupported ?? codeChallengeMethodsSupported
        merged.idTokenSigningAlgorithms = metadata.advertised.idTokenSigningAlgValuesSupported ?? idTokenSigningAlgorithms
        merged.authorizationResponseIssParameterSupported =
            metadata.advertised.authorizationResponseIssParameterSupported || authorizationResponseIssParameterSupported
        merged.mutualTLSEndpointAliases = metadata.advertised.mutualTLSEndpointAliases.isEmpty ? mutualTLSEndpointAliases : metadata.advertised.mutualTLSEndpointAliases
        merged.tlsClientCertificateBoundAccessTokens =
            metadata.advertised.tlsClientCertificateBoundAccessTokens || tlsClientCertificateBoundAccessTokens
        return merged
    }
}

extension ProviderMetadata {
    /// The scopes a login asks for when its caller names none: `openid`, and `offline_access` when
    /// the provider lists it in `scopes_supported` (a refresh token from providers that need it
    /// asked for, OIDC Core §11).
    package var defaultLoginScopes: [String] {
        ["openid"] + (scopesSupported?.contains("offline_access") == true ? ["offline_access"] : [])
    }
}
