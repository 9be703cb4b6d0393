public import Foundation
public import OIDC

/// A verified logout token (OIDC Back-Channel Logout 1.0 §2.4): who is to be logged out.
public struct LogoutToken: Sendable {
    /// The URI of the back-channel logout event: the `events` member every logout token carries.
    public static let backChannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout"

    /// `iss`: the issuer, exactly the expected one.
    public let issuer: String
    /// `sub`: the user at the issuer, when the token names one.
    public let subject: String?
    /// `sid`: the user's session at the issuer, when the token names one.
    public let sessionID: String?
    /// `aud`: the clients the token is meant for (one of them is this client).
    public let audience: [String]
    /// `iat`: when the issuer made the token.
    public let issuedAt: Date
    /// `exp`: when the token expires, when the issuer says (OIDC Back-Channel Logout 1.0 final
    /// requires it; providers written before it, such as glewlwyd 2.7, send none).
    public let expiresAt: Date?
    /// `jti`: the token's unique identifier, already recorded in the replay store.
    public let tokenID: String
    /// The algorithm the token was signed with.
    public let algorithm: JWSAlgorithm
    /// The header's `kid`, if any.
    public let keyID: String?
    /// Every claim, as parsed.
    public let claims: [String: JSONValue]

    /// The logins this token logs out, for `TokenStore.deleteLogins(_:)`: this issuer's
    /// logins of `clientID` with the token's `sid` and `sub` (each one when present).
    public func selector(clientID: String) -> LoginSelector {
        LoginSelector(checkedIssuer: issuer, clientID: clientID, subject: subject, sessionID: sessionID)
    }
}
