internal import OIDC

/// Certificate-bound access tokens (RFC 8705 §3) and the mTLS endpoint aliases' counter.
extension ProviderState {
    /// Binds `accessToken` to the client certificate whose `x5t#S256` is `thumbprint`.
    func bindAccessToken(_ accessToken: String, to thumbprint: String) {
        accessTokens[accessToken]?.certificateThumbprint = thumbprint
    }

    func recordAliasRequest(_ endpoint: TestProvider.Endpoint) {
        aliasRequestCounts[endpoint, default: 0] += 1
    }

    func aliasRequestCount(_ endpoint: TestProvider.Endpoint) -> Int { aliasRequestCounts[endpoint] ?? 0 }
}
