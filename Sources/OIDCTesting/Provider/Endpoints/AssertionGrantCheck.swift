internal import Foundation
internal import OIDC

/// The JWT of a JWT bearer grant (RFC 7523 §3), checked as a careful server does: an issuer it
/// trusts (``TestProvider/Configuration/trustedAssertionIssuers``), a signature by one of that
/// issuer's keys (never `none` or an HMAC), a `sub`, an `aud` naming this provider (its issuer or
/// its token endpoint), an `exp` in the future and at most a day away, and no `nbf` or `iat` ahead
/// of the clock. Unlike a client assertion, the same JWT may be presented again (a workload identity
/// file is read for each request until its owner rotates it). Every refusal is `invalid_grant`.
enum AssertionGrantCheck {
    /// The assertion's subject, once it passes.
    ///
    /// An identity assertion (ID-JAG, `typ` `oauth-id-jag+jwt`) must also name the authenticated
    /// client as its `client_id`, and this provider's issuer as its `aud`.
    static func subject(of assertion: String, client: TestProvider.Client, _ request: ProviderRequest, _ context: ProviderContext) async throws(OAuthError)
        -> String
    {
        let jws: ParsedJWS
        let claims: [String: JSONValue]
        do {
            jws = try ParsedJWS(assertion)
            claims = try StrictJSONParser.parseObject(jws.payload)
        } catch {
            throw .invalidGrant("The assertion is not a well-formed JWS.")
        }
        guard let issuer = claims["iss"]?.stringValue, let trusted = context.configuration.trustedAssertionIssuers.first(where: { $0.issuer == issuer })
        else {
            throw .invalidGrant("The assertion's issuer is not one this provider trusts.")
        }
        do { try ClientAssertionCheck.verify(jws, withKeysOf: trusted.jwks) } catch {
            throw .invalidGrant("The assertion does not verify with its issuer's keys: \(error.code).")
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw .invalidGrant("The assertion has no sub.") }
        let accepted: Set<String> = [context.issuer, context.issuer + ProviderPaths.token]
        guard ClientAssertionCheck.audiences(claims["aud"]).contains(where: accepted.contains) else {
            throw .invalidGrant("The assertion's aud does not name this provider (\(accepted.sorted().joined(separator: " or "))).")
        }
        if jws.header["typ"]?.stringValue?.lowercased() == ProviderState.identityAssertionType {
            guard claims["client_id"]?.stringValue == client.id else {
                throw .invalidGrant("The ID-JAG's client_id is not the authenticated client's.")
            }
            guard ClientAssertionCheck.audiences(claims["aud"]).contains(context.issuer) else {
                throw .invalidGrant("The ID-JAG's aud is not this authorization server's issuer.")
            }
        }
        let now = await context.state.now.timeIntervalSince1970
        guard let expiry = claims["exp"]?.numberValue, expiry > now else { throw .invalidGrant("The assertion has expired, or has no exp.") }
        guard expiry <= now + 86_400 else { throw .invalidGrant("The assertion's exp is more than a day away.") }
        for name in ["nbf", "iat"] {
            if let time = claims[name]?.numberValue, time > now + 60 { throw .invalidGrant("The assertion's \(name) is in the future.") }
        }
        return subject
    }
}
