internal import Foundation
internal import OIDC

extension ProviderState {
    /// The `typ` of an identity assertion JWT authorization grant (draft-ietf-oauth-identity-assertion-authz-grant).
    static let identityAssertionType = "oauth-id-jag+jwt"

    /// A token exchange (RFC 8693) that asks for an ID-JAG: an ID token this provider issued to
    /// `client`, still valid, traded for a JWT that tells the authorization server `audience` who
    /// the user is (`sub`), for which of its clients (`client_id`: the requesting client's id) and
    /// resource; signed with the provider's ID-token key, typed `oauth-id-jag+jwt`, valid 5 minutes,
    /// answered as a token that is not an access token (`token_type` `N_A`).
    func identityAssertion(
        subject: String, subjectType: String, client: TestProvider.Client, audience: String?, resource: String?, scope: String?
    ) throws(OAuthError) -> IssuedTokens {
        let idTokenType = TokenExchangeRequest.TokenType.idToken
        guard subjectType == idTokenType else { throw .invalidRequest("An ID-JAG is issued for an ID token: subject_token_type must be \(idTokenType).") }
        guard issuedIDTokens[subject] == client.id, let jws = try? ParsedJWS(subject),
            let claims = try? StrictJSONParser.parseObject(jws.payload), let expiry = claims["exp"]?.numberValue
        else {
            throw .invalidGrant("The subject token is not an ID token this provider issued to this client.")
        }
        guard expiry > now.timeIntervalSince1970 else { throw .invalidGrant("The subject ID token has expired.") }
        guard let audience, !audience.isEmpty else {
            throw .invalidRequest("audience is required: the issuer of the authorization server the ID-JAG is for.")
        }
        let issuedAt = Int(now.timeIntervalSince1970)
        var assertion: [String: Any] = [
            "iss": issuer, "sub": user.subject, "aud": audience, "client_id": client.id, "jti": try Self.randomToken(),
            "iat": issuedAt, "exp": issuedAt + 300,
        ]
        if let resource { assertion["resource"] = resource }
        if let scope { assertion["scope"] = scope }
        let signed: String
        do {
            signed = try keys.signingKey(configuration.idTokenAlgorithm).sign(claims: assertion, extraHeader: ["typ": Self.identityAssertionType])
        } catch {
            throw OAuthError(code: "server_error", description: "The provider could not sign the ID-JAG.", status: 500)
        }
        var issued = IssuedTokens(accessToken: signed, expiresIn: 300, scope: scope ?? "", issuedTokenType: TokenExchangeRequest.TokenType.identityAssertion)
        issued.tokenType = "N_A"
        return issued
    }
}
