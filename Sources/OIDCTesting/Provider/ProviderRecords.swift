internal import Foundation
internal import OIDC

/// An authorization request that passed validation: what a code remembers.
struct ValidatedAuthorization: Sendable {
    var client: TestProvider.Client
    /// The redirect URI exactly as the request sent it (the token request must repeat it).
    var redirectURI: String
    var scope: String
    var state: String?
    var nonce: String?
    /// The S256 `code_challenge`, if any.
    var codeChallenge: String?
    /// `dpop_jkt` (RFC 9449 §10): the code is redeemed only with a proof by this key.
    var dpopJKT: String?
    /// The client its response is signed for (JARM), when it asked for `response_mode=jwt` or
    /// `query.jwt`; `nil` for a plain response.
    var signedResponseClient: String?
    /// `resource` (RFC 8707): where the tokens are for; their `aud`.
    var resource: String?
    /// `authorization_details` (RFC 9396), checked.
    var authorizationDetails: AuthorizationDetails?
}

/// One login and everything descended from it: the code, then access and refresh tokens. Revoking
/// the family revokes them all.
struct TokenFamily: Sendable {
    var clientID: String
    var user: TestUser
    var authTime: Date
    var scope: String
    var revoked = false
    /// The `resource` the login was granted for (RFC 8707): its access tokens' `aud`.
    var resource: String?
    /// The `authorization_details` granted (RFC 9396), answered with every token of the family.
    var authorizationDetails: AuthorizationDetails?
}

struct AuthorizationCodeRecord: Sendable {
    var authorization: ValidatedAuthorization
    var familyID: String
    var expiresAt: Date
    /// Spent by its first redemption attempt, successful or not.
    var redeemed = false
}

struct RefreshTokenRecord: Sendable {
    var familyID: String
    /// Replaced by a rotated successor: presenting it again is reuse.
    var spent = false
    /// The DPoP key a public client's refresh token is bound to (RFC 9449 §5).
    var jkt: String?
}

struct AccessTokenRecord: Sendable {
    var familyID: String
    var clientID: String
    var scope: String
    var expiresAt: Date
    var revoked = false
    /// The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6); `nil` for a bearer token.
    var jkt: String?
    /// `x5t#S256` of the client certificate the token is bound to (RFC 8705 §3), if it is.
    var certificateThumbprint: String?
    /// The resource the token is for (`aud`, RFC 8707), when one was asked.
    var audience: String?
}

/// A successful token response.
struct IssuedTokens: Sendable {
    var accessToken: String
    var expiresIn: Int
    var refreshToken: String?
    var idToken: String?
    var scope: String
    /// RFC 8693's `issued_token_type`, for a token exchange's answer.
    var issuedTokenType: String?
    /// `Bearer`, `DPoP` for a bound token (RFC 9449 §5); `N_A` for a token exchange's answer that is
    /// not an access token (RFC 8693 §2.2.1).
    var tokenType = "Bearer"
    /// `authorization_details` granted (RFC 9396 §7).
    var authorizationDetails: AuthorizationDetails?

    var json: [String: Any] {
        var object: [String: Any] = [
            "access_token": accessToken, "token_type": tokenType, "expires_in": expiresIn, "scope": scope,
        ]
        if let refreshToken { object["refresh_token"] = refreshToken }
        if let idToken { object["id_token"] = idToken }
        if let issuedTokenType { object["issued_token_type"] = issuedTokenType }
        if let authorizationDetails { object["authorization_details"] = AuthorizationDetailsCheck.foundationValue(authorizationDetails) }
        return object
    }
}
