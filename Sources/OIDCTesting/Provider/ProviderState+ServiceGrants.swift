internal import Foundation
internal import OIDC

/// The grants without a user at a browser: client credentials (RFC 6749 §4.4) and token exchange
/// (RFC 8693); and token introspection (RFC 7662).
extension ProviderState {
    /// `grant_type=client_credentials`: an access token for the client itself (its `sub` is the
    /// client id), within its allowed scopes; no refresh token, no ID token (§4.4.3).
    func clientCredentials(
        client: TestProvider.Client, scope requested: String?, jkt: String? = nil, resource: String? = nil, authorizationDetails: AuthorizationDetails? = nil
    ) throws(OAuthError) -> IssuedTokens {
        guard !client.isPublic else {
            throw OAuthError(code: "unauthorized_client", description: "A public client cannot use client credentials.")
        }
        let asked = (requested ?? "").split(separator: " ").map(String.init).filter { $0 != "openid" }
        if let allowed = client.allowedScopes, let refused = asked.first(where: { !allowed.contains($0) }) {
            throw .invalidScope("The client may not ask for the scope '\(refused)'.")
        }
        let familyID = try Self.randomToken()
        let service = TestUser(subject: client.id, name: client.id)
        families[familyID] = TokenFamily(
            clientID: client.id, user: service, authTime: now, scope: asked.joined(separator: " "), resource: resource,
            authorizationDetails: authorizationDetails)
        return try issueTokens(
            familyID: familyID, scope: asked.joined(separator: " "), nonce: nil, includeRefreshToken: false, jkt: jkt, audience: resource)
    }

    /// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1), its assertion
    /// checked (``AssertionGrantCheck``): an access token about the assertion's `sub` (the
    /// configured user when it is theirs), within the client's allowed scopes; no refresh token and
    /// no ID token, so a new one comes from presenting an assertion again.
    func jwtBearer(subject: String, client: TestProvider.Client, scope requested: String?, jkt: String?, resource: String?) throws(OAuthError) -> IssuedTokens {
        let asked = (requested ?? "").split(separator: " ").map(String.init).filter { $0 != "openid" }
        if let allowed = client.allowedScopes, let refused = asked.first(where: { !allowed.contains($0) }) {
            throw .invalidScope("The client may not ask for the scope '\(refused)'.")
        }
        let familyID = try Self.randomToken()
        let user = subject == self.user.subject ? self.user : TestUser(subject: subject, name: subject)
        families[familyID] = TokenFamily(clientID: client.id, user: user, authTime: now, scope: asked.joined(separator: " "), resource: resource)
        return try issueTokens(
            familyID: familyID, scope: asked.joined(separator: " "), nonce: nil, includeRefreshToken: false, jkt: jkt, audience: resource)
    }

    /// `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`: an active access token of this
    /// provider, traded for a new access token for `client`, about the same user, with the same or
    /// less scope; or, when `requested_token_type` is the ID token type, an ID token about that user
    /// for `client`, answered as RFC 8693 §2.2.1 says of a token that is no access token (in
    /// `access_token`, `token_type` `N_A`). Only access tokens are taken.
    func exchangeToken(
        subject: String, subjectType: String, client: TestProvider.Client, scope requested: String?, requestedType: String?,
        jkt: String? = nil
    ) throws(OAuthError) -> IssuedTokens {
        let accessTokenType = TokenExchangeRequest.TokenType.accessToken
        guard subjectType == accessTokenType else {
            throw .invalidRequest("Only subject tokens of type \(accessTokenType) are accepted here.")
        }
        let idTokenType = TokenExchangeRequest.TokenType.idToken
        if let requestedType, requestedType != accessTokenType, requestedType != idTokenType {
            throw .invalidRequest("Only \(accessTokenType) and \(idTokenType) can be issued here.")
        }
        guard let (record, user) = validAccessToken(subject) else {
            throw .invalidGrant("The subject token is not an active access token of this provider.")
        }
        let granted = Set(record.scope.split(separator: " ").map(String.init))
        let asked = requested.map { $0.split(separator: " ").map(String.init) } ?? Array(granted).sorted()
        guard asked.allSatisfy(granted.contains) else { throw .invalidScope("The requested scope exceeds the subject token's.") }
        let familyID = try Self.randomToken()
        families[familyID] = TokenFamily(clientID: client.id, user: user, authTime: now, scope: asked.joined(separator: " "))
        if requestedType == idTokenType {
            let withID = try issueTokens(familyID: familyID, scope: (["openid"] + asked.filter { $0 != "openid" }).joined(separator: " "), nonce: nil, includeRefreshToken: false)
            guard let idToken = withID.idToken else { throw OAuthError(code: "server_error", description: "No ID token was made.", status: 500) }
            var issued = IssuedTokens(accessToken: idToken, expiresIn: withID.expiresIn, scope: withID.scope, issuedTokenType: idTokenType)
            issued.tokenType = "N_A"
            return issued
        }
        var issued = try issueTokens(
            familyID: familyID, scope: asked.filter { $0 != "openid" }.joined(separator: " "), nonce: nil, includeRefreshToken: false, jkt: jkt
        )
        issued.issuedTokenType = accessTokenType
        return issued
    }

    /// RFC 7662 §2.2: what the provider knows of `token`, for `client`: an active access or refresh
    /// token of this client is described; anything else (unknown, expired, revoked, spent, another
    /// client's) is `{"active": false}`, so nothing is revealed. A DPoP-bound token shows its key's
    /// thumbprint as `cnf.jkt` (RFC 9449 §6.2), and an access token `token_type` `DPoP`.
    func introspect(_ token: String, client: TestProvider.Client) -> ProviderResponse {
        .json(description(of: token, for: client), noStore: true)
    }

    private func description(of token: String, for client: TestProvider.Client) -> [String: Any] {
        // A token is described to the client it was issued to; a token for a resource (RFC 8707)
        // also to any client that authenticates (the resource's server, RFC 7662 §2.1), with the
        // resource as its aud.
        if let (record, user) = validAccessToken(token),
            record.clientID == client.id || (record.audience != nil && client.authentication != .none)
        {
            var description: [String: Any] = [
                "active": true, "scope": record.scope, "client_id": record.clientID, "token_type": record.jkt == nil ? "Bearer" : "DPoP",
                "exp": Int(record.expiresAt.timeIntervalSince1970), "sub": user.subject, "aud": record.audience ?? record.clientID, "iss": issuer,
            ]
            // RFC 9396 §9.2: what was granted, in the introspection answer.
            if let details = families[record.familyID]?.authorizationDetails { description["authorization_details"] = details.elements.map(\.foundationValue) }
            var confirmation: [String: String] = [:]
            if let jkt = record.jkt { confirmation["jkt"] = jkt }
            if let thumbprint = record.certificateThumbprint { confirmation["x5t#S256"] = thumbprint }
            if !confirmation.isEmpty { description["cnf"] = confirmation }
            return description
        }
        if let record = refreshTokens[token], !record.spent, let family = families[record.familyID], !family.revoked,
            family.clientID == client.id
        {
            var description: [String: Any] = [
                "active": true, "scope": family.scope, "client_id": family.clientID, "token_type": "refresh_token",
                "sub": family.user.subject, "iss": issuer,
            ]
            if let jkt = record.jkt { description["cnf"] = ["jkt": jkt] }
            return description
        }
        return ["active": false]
    }
}
