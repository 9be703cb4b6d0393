internal import Foundation
internal import OIDC

/// The claim rules of OIDC Back-Channel Logout 1.0 §2.4 and §2.6 steps 3–6, on a token whose
/// signature has verified.
enum LogoutTokenClaims {
    static func check(_ claims: [String: JSONValue], verifier: LogoutTokenVerifier, jws: ParsedJWS, now: TimeInterval) throws(LogoutTokenError) -> LogoutToken {
        let leeway = verifier.leeway
        guard case .string(let issuer)? = claims["iss"] else {
            throw LogoutTokenError(.issuer, "The token has no string 'iss' claim.")
        }
        guard issuer == verifier.issuer else {
            throw LogoutTokenError(.issuer, "The token was issued by another issuer than the expected one.")
        }
        let found: [String]?
        do { found = try Audience.values(claims["aud"]) } catch {
            throw LogoutTokenError(.audience, "The token's 'aud' claim \(Audience.rule).")
        }
        guard let audience = found else { throw LogoutTokenError(.audience, "The token has no 'aud' claim.") }
        guard audience.contains(verifier.clientID) else {
            throw LogoutTokenError(.audience, "The token is not meant for this client (aud does not contain the client id).")
        }
        guard let issuedAt = date(claims["iat"]) else {
            throw LogoutTokenError(.issuedAt, "The token has no 'iat' claim that is a number of seconds since 1970.")
        }
        guard issuedAt <= now + leeway else {
            throw LogoutTokenError(.issuedAt, "The token was issued in the future (iat beyond the \(leeway) s leeway); check the clocks.")
        }
        guard issuedAt >= now - verifier.maximumAge - leeway else {
            throw LogoutTokenError(.issuedAt, "The token was issued longer ago than the accepted \(verifier.maximumAge) s (iat); a logout token is sent when the logout happens.")
        }
        var expiresAt: Double?
        if let member = claims["exp"], member != .null {
            guard let seconds = date(member) else { throw LogoutTokenError(.expired, "The token's 'exp' claim is not a number of seconds since 1970.") }
            guard now < seconds + leeway else { throw LogoutTokenError(.expired, "The token has expired (exp, leeway \(leeway) s).") }
            expiresAt = seconds
        }
        guard case .object(let events)? = claims["events"] else {
            throw LogoutTokenError(.events, "The token has no 'events' claim that is a JSON object: it is not a logout token.")
        }
        guard case .object? = events[LogoutToken.backChannelLogoutEvent] else {
            throw LogoutTokenError(
                .events, "The token's 'events' claim has no member \(LogoutToken.backChannelLogoutEvent) whose value is a JSON object.")
        }
        let subject = try identifier(claims["sub"], "sub")
        let sessionID = try identifier(claims["sid"], "sid")
        guard subject != nil || sessionID != nil else {
            throw LogoutTokenError(.subjectOrSession, "The token names neither a user (sub) nor a session (sid).")
        }
        guard claims["nonce"] == nil else {
            throw LogoutTokenError(.nonce, "The token carries a 'nonce' claim, which a logout token never does (an ID token?).")
        }
        guard case .string(let tokenID)? = claims["jti"], !tokenID.isEmpty else {
            throw LogoutTokenError(.jti, "The token has no 'jti' claim that is a non-empty string; its replay could not be detected.")
        }
        return LogoutToken(
            issuer: issuer, subject: subject, sessionID: sessionID, audience: audience, issuedAt: Date(timeIntervalSince1970: issuedAt),
            expiresAt: expiresAt.map(Date.init(timeIntervalSince1970:)), tokenID: tokenID, algorithm: jws.algorithm, keyID: jws.keyID,
            claims: claims)
    }

    /// A NumericDate (the kit's one rule), as seconds.
    private static func date(_ value: JSONValue?) -> Double? { NumericDate.seconds(value) }

    /// `sub` or `sid`: absent, or a non-empty string.
    private static func identifier(_ value: JSONValue?, _ name: String) throws(LogoutTokenError) -> String? {
        switch value {
        case nil: return nil
        case .string(let text)? where !text.isEmpty: return text
        default: throw LogoutTokenError(.subjectOrSession, "The token's '\(name)' claim must be a non-empty string.")
        }
    }
}
