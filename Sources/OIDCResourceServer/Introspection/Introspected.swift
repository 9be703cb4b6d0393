internal import Foundation
internal import OIDC

/// An opaque token's facts from the authorization server's introspection answer (RFC 7662 §2.2),
/// checked as a JWT's claims would be where the answer has them: active; `iss`, when present, one
/// the resource trusts (or the introspecting provider); `aud`, when present (or required:
/// ``IntrospectionSettings/requiresAudience``), this resource's;
/// `exp` not passed and `nbf` not ahead (with the leeway).
enum Introspected {
    static func facts(_ token: String, cache: IntrospectionCache, configuration: ResourceServer.Configuration, now: Date) async throws(Denial) -> TokenFacts {
        let answer: TokenIntrospection
        do { answer = try await cache.answer(for: token, now: now) } catch {
            throw .unavailable(.introspectionUnavailable, "The access token could not be introspected; try again later.")
        }
        guard answer.active else { throw .invalidToken(.inactiveToken, "The access token is not active (expired, revoked, or unknown).") }
        if let type = answer.tokenType, type.lowercased() == "refresh_token" {
            throw .invalidToken(.wrongTokenType, "The token is a refresh token, not an access token.")
        }
        let clock = now.timeIntervalSince1970
        if let issuer = answer.issuer {
            let provider = configuration.introspection?.client.provider.issuer
            guard issuer == provider || configuration.issuers.contains(where: { $0.issuer == issuer }) else {
                throw .invalidToken(.untrustedIssuer, "The access token was issued by an authorization server this resource does not trust.")
            }
        }
        if let audience = answer.audience, !audience.contains(where: { configuration.audiences.contains($0) }) {
            throw .invalidToken(.audienceMismatch, "The access token is not meant for this resource (aud).")
        }
        if answer.audience == nil, configuration.introspection?.requiresAudience == true {
            throw .invalidToken(.audienceMismatch, "The introspection answer names no audience (aud), and this resource requires its own.")
        }
        if let expiry = answer.expiresAt, clock >= expiry.timeIntervalSince1970 + configuration.leeway {
            throw .invalidToken(.tokenExpired, "The access token has expired.")
        }
        if let notBefore = answer.notBefore, notBefore.timeIntervalSince1970 > clock + configuration.leeway {
            throw .invalidToken(.tokenNotYetValid, "The access token is not valid yet (nbf).")
        }
        let binding: (jkt: String?, x5t: String?)
        switch TokenFacts.confirmation(answer.raw["cnf"]) {
        case .checked(let jkt, let x5t): binding = (jkt, x5t)
        case .malformed: throw .invalidToken(.invalidClaim, "The introspection answer's cnf must be an object whose jkt and x5t#S256 are non-empty strings.")
        case .unsupported(let why): throw .invalidToken(.unsupportedConfirmation, "The access token is refused: the introspection answer says \(why).")
        }
        // A DPoP token whose key the answer does not name cannot be checked: never taken as a bearer token.
        if let type = answer.tokenType, type.lowercased() == "dpop", binding.jkt == nil {
            throw .invalidToken(.invalidClaim, "The introspection answer says DPoP but names no key (cnf.jkt).")
        }
        return TokenFacts(
            subject: answer.subject, clientID: answer.clientID, scopes: Set(answer.scopes ?? []), issuer: answer.issuer,
            audience: answer.audience ?? [], expiresAt: answer.expiresAt, issuedAt: answer.issuedAt, tokenID: answer.tokenID,
            keyThumbprint: binding.jkt, certificateThumbprint: binding.x5t, source: .introspection, claims: .object(answer.raw)
        )
    }
}
