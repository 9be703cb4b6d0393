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
        let source = AuthenticatedSession.TokenSource(
            kind: .clientCredentials(tokenClient, scopes: scopes, parameters: parameters, dpopKey: serviceDPoPKeyMaker))
        var options = options
        options.stages = configuration.resourceStages + options.stages
        options.callStages = configuration.callStages
        return AuthenticatedSession(
            store: store, key: key ?? serviceSessionKey(scopes: scopes, parameters: parameters), source: source, transport: transport,
            allowlist: allowlist, options: options, now: tokenClient.now, logger: logger, dpopNonces: dpopNonces
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
