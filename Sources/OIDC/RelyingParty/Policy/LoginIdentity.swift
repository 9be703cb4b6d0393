internal import Foundation

/// What a login proves about its user, chosen once for a relying party and followed by every flow
/// (the code flow, the loopback login, the device flow):
///
/// - ``openID``, the default: `openid` is asked for (put first when missing); the flows need the
///   provider's keys before they start, and the ID token is required and verified.
/// - ``oauth``: a plain OAuth 2.0 server (a relying party made for a resource whose authorization
///   server publishes no OpenID metadata, ``DiscoveredResource/isPlainOAuth``): exactly the scopes
///   asked for, no keys needed, and an ID token that comes anyway is not used to name anybody; the
///   login is kept without a subject, the access token alone saying who to the resource servers.
package enum LoginIdentity: Sendable, Hashable {
    /// OpenID Connect: an ID token, required and verified.
    case openID
    /// Plain OAuth 2.0: no ID token asked for or used.
    case oauth

    /// The scopes a login asks for, from `asked`.
    func scopes(_ asked: [String]) -> [String] {
        self == .oauth || asked.contains("openid") ? asked : ["openid"] + asked
    }

    /// Checks, before a login starts, that it can complete at `relyingParty`: an OpenID login needs
    /// the provider's keys (its `jwks_uri`).
    ///
    /// - Throws: ``OIDCError/Code/missingParameter`` for an OpenID login at a provider without keys.
    func checkReady(_ relyingParty: RelyingParty) throws(OIDCError) {
        if self == .openID { _ = try relyingParty.requireKeys() }
    }

    /// `tokens`, as a grant returned them, with what this identity uses of them: a plain OAuth
    /// login drops an ID token, which names nobody there.
    func received(_ tokens: TokenSet) -> TokenSet {
        guard self == .oauth else { return tokens }
        var tokens = tokens
        tokens.idToken = nil
        return tokens
    }

    /// The login to keep from a code flow's `response` to `request`, at `relyingParty`: verified
    /// as an OpenID login (``RelyingParty/completeLogin(_:for:now:)``), or completed as a plain
    /// OAuth one; with the relying party's `resource` (RFC 8707).
    func complete(
        _ response: AuthorizationResponse, for request: AuthorizationRequest, at relyingParty: RelyingParty
    ) async throws(OIDCError) -> StoredLogin {
        var login: StoredLogin
        switch self {
        case .openID: login = StoredLogin(try await relyingParty.completeLogin(response, for: request))
        case .oauth: login = try await relyingParty.completePlainOAuthLogin(response, for: request)
        }
        login.resource = relyingParty.tokenClient.resource
        return login
    }
}

extension LoginIdentity {
    /// The login to keep from `tokens` a grant without a front channel returned (the device flow,
    /// CIBA next) at `relyingParty`: an ID token this identity uses is verified with `verify` and
    /// names the user; without one (RFC 8628 promises none; a plain OAuth server's is dropped) the
    /// login is kept without a subject, bound to `dpopKey`. With the relying party's `resource`.
    func complete(
        _ tokens: TokenSet, at relyingParty: RelyingParty, dpopKey: DPoPKey?,
        verify: (TokenSet, Secret) async throws(OIDCError) -> VerifiedLogin
    ) async throws(OIDCError) -> StoredLogin {
        let tokens = received(tokens)
        var login: StoredLogin
        if let idToken = tokens.idToken {
            login = StoredLogin(try await verify(tokens, idToken))
        } else {
            let provider = relyingParty.provider
            login = StoredLogin(tokens: tokens, issuer: provider.issuer, clientID: relyingParty.clientID, subject: nil, provider: provider)
            login.dpopKey = dpopKey
        }
        login.resource = relyingParty.tokenClient.resource
        return login
    }
}

extension RelyingParty {
    /// What this relying party's logins prove about the user: ``LoginIdentity/oauth`` when it was
    /// made for a resource at a plain OAuth server, ``LoginIdentity/openID`` otherwise.
    package var identity: LoginIdentity { protectedResource?.identity ?? .openID }
}
