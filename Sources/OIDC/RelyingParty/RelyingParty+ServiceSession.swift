internal import Foundation

/// A daemon's or a CI job's own tokens: client credentials (RFC 6749 §4.4), no person involved.
extension RelyingParty {
    /// A session that holds this client's own tokens: it asks the token endpoint for them with the
    /// client's credentials (a secret or a private key) when it has none or they expire, once for
    /// every caller, and sends them to the hosts of `allowlist` only. No login is needed first.
    ///
    /// ```swift
    /// let rp = RelyingParty(provider: provider, clientID: "nightly-report", authentication: .privateKeyJWT(key))
    /// let session = rp.serviceSession(scopes: ["reports.write"], allowlist: .default(for: api))
    /// let answer = try await session.send(HTTPRequest(method: "POST", url: api, body: report))
    /// ```
    ///
    /// - Parameters:
    ///   - scopes: the scope values asked for.
    ///   - parameters: more parameters of the request, such as `resource` (RFC 8707).
    ///   - allowlist: the hosts that may receive the access token.
    ///   - store: where the tokens are kept between calls: this process's memory by default; a
    ///     ``FileKeychain`` or a database lets several processes share one token, and one request.
    ///   - key: their key there: ``serviceSessionKey(scopes:parameters:)`` by default, which names
    ///     the client, the issuer and what is asked for, so that sessions asking for other scopes or
    ///     another `resource` never take each other's tokens from a shared store.
    ///   - options: the session's options.
    public func serviceSession(
        scopes: [String] = [], parameters: [OAuthParameter] = [], allowlist: HostAllowlist, store: any TokenStore = InMemoryTokenStore(),
        key: TokenStoreKey? = nil, options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) -> AuthenticatedSession {
        ownGrantSession(
            .clientCredentials(scopes: scopes, parameters: parameters), allowlist: allowlist, store: store,
            key: key ?? serviceSessionKey(scopes: scopes, parameters: parameters), options: options)
    }

    /// A session whose tokens come from a grant of the client's own, asked anew when they expire.
    private func ownGrantSession(
        _ own: AuthenticatedSession.TokenSource.OwnGrant, allowlist: HostAllowlist, store: any TokenStore, key: TokenStoreKey,
        options: AuthenticatedSession.Options
    ) -> AuthenticatedSession {
        var options = options
        options.stages = configuration.resourceStages + options.stages
        options.callStages = configuration.callStages
        return AuthenticatedSession(
            store: store, key: key, source: AuthenticatedSession.TokenSource(kind: .ownGrant(tokenClient, own, dpopKey: serviceDPoPKeyMaker)),
            transport: transport, allowlist: allowlist, options: options, now: tokenClient.now, logger: logger, dpopNonces: dpopNonces
        )
    }

    /// The store key of this client's own tokens for `scopes` and `parameters`: service
    /// `client-credentials`, account the client id, `#`, and 16 hex digits of the SHA-256 of the
    /// issuer, the scopes and the parameters (`nightly-reports#3f1c0e9a52b7d4e8`).
    public func serviceSessionKey(scopes: [String] = [], parameters: [OAuthParameter] = []) -> TokenStoreKey {
        var request = [provider.issuer, scopes.joined(separator: " ")] + parameters.map { $0.name + "=" + $0.value }
        request = request.map { $0.replacingOccurrences(of: "\n", with: " ") }
        let digest = (try? LibCrypto.sha256(Array(request.joined(separator: "\n").utf8))) ?? []
        let hex = digest.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return TokenStoreKey(service: "client-credentials", account: clientID + "#" + hex)
    }
}

/// A workload's tokens for a JWT it holds: the JWT bearer grant (RFC 7523 §2.1).
extension RelyingParty {
    /// A session that holds the tokens the JWT bearer grant gives for `assertion`: it asks the
    /// token endpoint when it has none or they expire (there is no refresh token), calling
    /// `assertion` each time for the JWT as it is then (a Kubernetes service account token or a
    /// cloud workload identity file, rotated by its owner), once for every caller, and sends the
    /// access token to the hosts of `allowlist` only.
    ///
    /// ```swift
    /// let session = rp.jwtBearerSession(scopes: ["reports.read"], allowlist: .default(for: api)) {
    ///     try Secret.fromFile(atPath: "/var/run/secrets/tokens/oidc-token")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - scopes: the scope values asked for.
    ///   - parameters: more parameters of the request, such as `audience`.
    ///   - allowlist: the hosts that may receive the access token.
    ///   - store: where the tokens are kept between calls: this process's memory by default.
    ///   - key: their key there: `jwt-bearer`, the client id and a digest of what is asked, by default.
    ///   - options: the session's options.
    ///   - assertion: the JWT to present, read when new tokens are needed.
    public func jwtBearerSession(
        scopes: [String] = [], parameters: [OAuthParameter] = [], allowlist: HostAllowlist, store: any TokenStore = InMemoryTokenStore(),
        key: TokenStoreKey? = nil, options: AuthenticatedSession.Options = AuthenticatedSession.Options(),
        assertion: @escaping @Sendable () async throws(OIDCError) -> Secret
    ) -> AuthenticatedSession {
        var storeKey = key ?? serviceSessionKey(scopes: scopes, parameters: parameters)
        if key == nil { storeKey.service = "jwt-bearer" }
        return ownGrantSession(
            AuthenticatedSession.TokenSource.OwnGrant(grant: .jwtBearer(scopes: scopes, parameters: parameters), assertion: assertion),
            allowlist: allowlist, store: store, key: storeKey, options: options)
    }
}
