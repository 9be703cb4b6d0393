internal import Foundation
internal import OIDC

extension ProviderState {
    /// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6). A code is spent by its first
    /// redemption attempt; a second one revokes every token issued from it (RFC 6749 §4.1.2). A code
    /// bound with `dpop_jkt` is redeemed only with a proof by that key (`jkt`, RFC 9449 §10); any
    /// other attempt is refused without spending it, so nobody without the key can spend or revoke it.
    func exchangeCode(
        _ code: String, client: TestProvider.Client, redirectURI: String, codeVerifier: String?, jkt: String? = nil, resource: String? = nil
    ) throws(OAuthError) -> IssuedTokens {
        guard let record = codes[code] else {
            throw .invalidGrant("The authorization code is unknown.")
        }
        if let bound = record.authorization.dpopJKT, jkt.map({ ConstantTime.equals($0, bound) }) != true {
            throw .invalidDPoPProof("The authorization code is bound to a DPoP key (dpop_jkt): send a proof signed by that key.")
        }
        if record.redeemed {
            revokeFamily(record.familyID)
            throw .invalidGrant("The authorization code was already used; the tokens issued for it are revoked.")
        }
        codes[code]?.redeemed = true
        let authorization = record.authorization
        guard now < record.expiresAt else {
            throw .invalidGrant("The authorization code has expired.")
        }
        guard authorization.client.id == client.id else {
            throw .invalidGrant("The authorization code was issued to another client.")
        }
        guard authorization.redirectURI == redirectURI else {
            throw .invalidGrant("redirect_uri differs from the one in the authorization request.")
        }
        switch (authorization.codeChallenge, codeVerifier) {
        case (nil, nil):
            break
        case (nil, .some):
            throw .invalidGrant("code_verifier was sent, but the authorization request had no code_challenge.")
        case (.some, nil):
            throw .invalidGrant("code_verifier is required: the authorization request had a code_challenge.")
        case (.some(let challenge), .some(let verifier)):
            guard let computed = try? PKCE(verifier: verifier).challenge, ConstantTime.equals(computed, challenge) else {
                throw .invalidGrant("code_verifier does not match the code_challenge.")
            }
        }
        let audience = try grantedResource(asked: resource, family: record.familyID)
        return try issueTokens(
            familyID: record.familyID, scope: authorization.scope, nonce: authorization.nonce, includeRefreshToken: true, jkt: jkt,
            audience: audience
        )
    }

    /// `grant_type=refresh_token` (RFC 6749 §6). With rotation the presented token is spent and a
    /// new one issued; presenting a spent one is reuse and revokes the whole family (RFC 9700 §4.14.2).
    /// A refresh token bound to a DPoP key (a public client's, RFC 9449 §5) is taken only with a proof
    /// by that key (`jkt`); without one it is refused before anything is spent or revoked.
    func refresh(
        _ refreshToken: String, client: TestProvider.Client, scope requested: String?, jkt: String? = nil, resource: String? = nil
    ) throws(OAuthError) -> IssuedTokens {
        guard let record = refreshTokens[refreshToken], let family = families[record.familyID] else {
            throw .invalidGrant("The refresh token is unknown.")
        }
        guard family.clientID == client.id else {
            throw .invalidGrant("The refresh token was issued to another client.")
        }
        if let bound = record.jkt, jkt.map({ ConstantTime.equals($0, bound) }) != true {
            throw .invalidDPoPProof(
                jkt == nil ? "The refresh token is DPoP-bound: send a proof signed by its key." : "The refresh token is bound to another DPoP key than the proof's."
            )
        }
        guard !family.revoked else {
            throw .invalidGrant("The refresh token has been revoked.")
        }
        if record.spent {
            revokeFamily(record.familyID)
            throw .invalidGrant("The refresh token was already used; every token of this login is now revoked.")
        }
        var scope = family.scope
        if let requested {
            let granted = Set(family.scope.split(separator: " "))
            let asked = requested.split(separator: " ")
            guard asked.allSatisfy(granted.contains) else {
                throw .invalidScope("The requested scope exceeds the one originally granted.")
            }
            scope = asked.joined(separator: " ")
        }
        if resource != nil, configuration.protectedResource.refusesResourceOnRefresh {
            throw OAuthError(code: "invalid_target", description: "This provider takes no resource parameter on a refresh.")
        }
        let audience = try grantedResource(asked: resource, family: record.familyID)
        let rotate = configuration.refreshTokenRotation
        if rotate { refreshTokens[refreshToken]?.spent = true }
        return try issueTokens(familyID: record.familyID, scope: scope, nonce: nil, includeRefreshToken: rotate, jkt: jkt, audience: audience)
    }

    /// A login without the browser: a new token family for `clientID` with the current user, as if
    /// the code flow had just completed (for tests that start already logged in).
    func issueLogin(clientID: String, scope: String, nonce: String?, jkt: String? = nil) throws(OAuthError) -> IssuedTokens {
        guard configuration.clients.contains(where: { $0.id == clientID }) else {
            throw OAuthError(code: "invalid_client", description: "The client '\(clientID)' is not registered.", status: 400)
        }
        let familyID = try Self.randomToken()
        families[familyID] = TokenFamily(clientID: clientID, user: user, authTime: now, scope: scope)
        return try issueTokens(familyID: familyID, scope: scope, nonce: nonce, includeRefreshToken: true, jkt: jkt)
    }

    /// An access token, a refresh token (when asked and configured) and an ID token (when the
    /// scope has `openid` and `includeIDToken`) for the family. With `jkt` (a DPoP proof's key) the access token is bound
    /// to it (`token_type` `DPoP`), and so is a public client's refresh token (RFC 9449 §5);
    /// confidential clients' refresh tokens are bound by their client authentication instead.
    func issueTokens(
        familyID: String, scope: String, nonce: String?, includeRefreshToken: Bool, jkt: String? = nil, includeIDToken: Bool = true,
        audience: String? = nil
    ) throws(OAuthError) -> IssuedTokens {
        guard let family = families[familyID] else {
            throw OAuthError(code: "server_error", description: "The login is gone.", status: 500)
        }
        let issuedAt = now
        let accessToken: String
        if let audience {
            accessToken = try resourceAccessToken(family: family, scope: scope, audience: audience, jkt: jkt, issuedAt: issuedAt)
        } else {
            accessToken = try Self.randomToken()
        }
        accessTokens[accessToken] = AccessTokenRecord(
            familyID: familyID, clientID: family.clientID, scope: scope,
            expiresAt: issuedAt.addingTimeInterval(TimeInterval(configuration.accessTokenLifetime)), jkt: jkt, audience: audience
        )
        var refreshToken: String?
        if includeRefreshToken, configuration.issuesRefreshTokens {
            let token = try Self.randomToken()
            let isPublic = configuration.clients.first { $0.id == family.clientID }?.isPublic ?? true
            refreshTokens[token] = RefreshTokenRecord(familyID: familyID, jkt: isPublic ? jkt : nil)
            refreshToken = token
        }
        var idToken: String?
        if includeIDToken, configuration.metadataDocuments == .openIDAndOAuth, scope.split(separator: " ").contains("openid") {
            let token = try signIDToken(family: family, nonce: nonce, accessToken: accessToken, issuedAt: issuedAt)
            issuedIDTokens[token] = family.clientID
            idToken = token
        }
        var issued = IssuedTokens(
            accessToken: accessToken, expiresIn: configuration.accessTokenLifetime,
            refreshToken: refreshToken, idToken: idToken, scope: scope
        )
        if jkt != nil { issued.tokenType = "DPoP" }
        issued.authorizationDetails = family.authorizationDetails
        return issued
    }

    /// OIDC Core §2 claims: `iss`, `sub`, `aud`, `azp`, `exp`, `iat`, `auth_time`, `nonce` (when
    /// sent), `at_hash` (§3.1.3.6: left half of SHA-256 of the access token), `amr`/`acr` and the
    /// user's profile claims.
    private func signIDToken(family: TokenFamily, nonce: String?, accessToken: String, issuedAt: Date) throws(OAuthError) -> String {
        var claims = family.user.profileClaims
        if let amr = family.user.amr { claims["amr"] = amr }
        if let acr = family.user.acr { claims["acr"] = acr }
        let iat = Int(issuedAt.timeIntervalSince1970)
        claims["iss"] = issuer
        claims["sub"] = family.user.subject
        claims["aud"] = family.clientID
        claims["azp"] = family.clientID
        claims["iat"] = iat
        claims["exp"] = iat + configuration.idTokenLifetime
        claims["auth_time"] = Int(family.authTime.timeIntervalSince1970)
        if let nonce { claims["nonce"] = nonce }
        do {
            let digest = try LibCrypto.sha256(Array(accessToken.utf8))
            claims["at_hash"] = Base64URLEncoding.encode(digest.prefix(digest.count / 2))
            return try keys.signingKey(configuration.idTokenAlgorithm).sign(claims: claims)
        } catch {
            throw OAuthError(code: "server_error", description: "The provider could not sign the ID token.", status: 500)
        }
    }
}
