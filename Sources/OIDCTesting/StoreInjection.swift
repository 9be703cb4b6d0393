internal import Foundation
public import OIDC

/// Token injection: start a test "already logged in" by putting a login straight into a store.
extension TokenStore {
    /// Puts `tokens` under `key`, as a completed login with `issuer` and `clientID` would have.
    /// The subject is read from the ID token's claims when not given, and the session id from its
    /// `sid` (unverified: you made the token).
    /// With `provider`, the login names its endpoints (`StoredLogin.provider`), as one made by
    /// `RelyingParty` does.
    @discardableResult
    public func inject(
        _ tokens: TokenSet, issuer: String, clientID: String, subject: String? = nil, provider: ProviderConfiguration? = nil,
        attributes: [String: String] = [:], key: TokenStoreKey
    ) async throws -> StoredLogin {
        var subject = subject
        let claims = tokens.idToken.flatMap { try? UnverifiedJWT($0.revealedValue) }?.claims
        if subject == nil { subject = claims?["sub"]?.stringValue }
        var login = StoredLogin(
            tokens: tokens, issuer: issuer, clientID: clientID, subject: subject, provider: provider, attributes: attributes
        )
        login.sessionID = claims?["sid"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        try await save(login, for: key)
        return login
    }
}

extension TestProvider {
    /// Logs the provider's current user in for `clientID` without a browser and puts the real
    /// tokens into `store` under `key` (default: service `oidc`, account `clientID`). The stored
    /// login names this provider (``providerConfiguration``) as its `StoredLogin.provider`.
    @discardableResult
    public func logIn(
        into store: some TokenStore, key: TokenStoreKey? = nil, clientID: String = Client.default.id,
        scope: String = "openid offline_access"
    ) async throws -> StoredLogin {
        let tokens = try await issueTokens(clientID: clientID, scope: scope)
        return try await store.inject(
            tokens, issuer: issuer, clientID: clientID, provider: providerConfiguration,
            key: key ?? TokenStoreKey(service: "oidc", account: clientID)
        )
    }
}
