internal import Foundation

extension IDTokenVerifier {
    /// The verifier of an ID token a token endpoint sent with `accessToken`: the one assembly of
    /// every login's (the code flow's, the device flow's) and every refresh's. `issuer` and
    /// `clientID` as `iss` and `aud`, `nonce`'s rule, the access token's `at_hash`, `issuerMatching`,
    /// `hmacSecret` for HS256 when the client has a secret, and `profile`'s algorithms
    /// (the ``SecurityProfile``).
    package init(
        tokenResponseOf issuer: String, clientID: String, nonce: NonceRule, accessToken: Secret?, issuerMatching: IssuerMatching,
        hmacSecret: Secret? = nil, profile: SecurityProfile = .none
    ) {
        self.init(issuer: issuer, clientID: clientID, nonce: nonce)
        self.accessToken = accessToken
        self.issuerMatching = issuerMatching
        self.hmacSecret = hmacSecret
        profile.constrain(&self)
    }
}
