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
            metadata.requirePushedAuthorizationRequests || requiresPushedAuthorizationRequests
        merged.requiresSignedRequestObjects = metadata.requireSignedRequestObject || requiresSignedRequestObjects
        merged.requestObjectSigningAlgorithms = metadata.requestObjectSigningAlgValuesSupported ?? requestObjectSigningAlgorithms
        merged.dpopSigningAlgorithms = metadata.dpopSigningAlgValuesSupported ?? dpopSigningAlgorithms
        merged.responseModesSupported = metadata.responseModesSupported ?? responseModesSupported
        merged.authorizationSigningAlgorithms = metadata.authorizationSigningAlgValuesSupported ?? authorizationSigningAlgorithms
        merged.codeChallengeMethodsSupported = metadata.codeChallengeMethodsSupported ?? codeChallengeMethodsSupported
        merged.idTokenSigningAlgorithms = metadata.idTokenSigningAlgValuesSupported ?? idTokenSigningAlgorithms
        merged.authorizationResponseIssParameterSupported =
            metadata.authorizationResponseIssParameterSupported || authorizationResponseIssParameterSupported
        merged.mutualTLSEndpointAliases = metadata.mutualTLSEndpointAliases.isEmpty ? mutualTLSEndpointAliases : metadata.mutualTLSEndpointAliases
        merged.tlsClientCertificateBoundAccessTokens =
            metadata.tlsClientCertificateBoundAccessTokens || tlsClientCertificateBoundAccessTokens
        return merged
    }
}

extension ProviderMetadata {
    /// The scopes a login asks for when its caller names none: `openid`, and `offline_access` when
    /// the provider lists it in `scopes_supported` (a refresh token from providers that need it
    /// asked for, OIDC Core §11).
    public var defaultLoginScopes: [String] {
        ["openid"] + (scopesSupported?.contains("offline_access") == true ? ["offline_access"] : [])
    }
}
