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
    ///   - key: their key there: service `client-credentials`, account the client id, by default.
    ///   - options: the session's options.
    public func serviceSession(
        scopes: [String] = [], parameters: [OAuthParameter] = [], allowlist: HostAllowlist, store: any TokenStore = InMemoryTokenStore(),
        key: TokenStoreKey? = nil, options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) -> AuthenticatedSession {
        AuthenticatedSession(
            store: store, key: key ?? TokenStoreKey(service: "client-credentials", account: clientID),
            source: .clientCredentials(tokenClient, scopes: scopes, parameters: parameters), transport: transport, allowlist: allowlist,
            options: options, now: tokenClient.now, logger: logger
        )
    }
}
