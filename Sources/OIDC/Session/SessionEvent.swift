/// What an ``AuthenticatedSession`` tells its observers.
public enum SessionEvent: Sendable, Equatable {
    /// New tokens were obtained (a refresh, the host's token provider, or another process).
    case tokensRefreshed
    /// The user is logged out: the stored login is gone.
    case loggedOut(LogoutReason)
    /// A refresh brought an ID token that failed verification (OIDC Core §12.2: same `iss`, same
    /// `sub`, this client, a valid signature); it was dropped and the previous one kept.
    case refreshedIDTokenRejected(OIDCError)
}

/// Why a session logged the user out.
public enum LogoutReason: Sendable, Equatable {
    /// The provider rejected the refresh with `invalid_grant`: the refresh token, and so the login,
    /// is dead, a new one is needed. Carries the provider's error. (`invalid_client` logs nobody
    /// out: the client's credentials are wrong, not the login.)
    case refreshRejected(OIDCError.ProviderError?)
    /// The login has no refresh token and the access token expired.
    case noRefreshToken
    /// The host's token provider said the user is not authenticated.
    case unauthenticated
    /// ``AuthenticatedSession/logout(revoke:)`` was called.
    case userInitiated
    /// The provider answered the refresh of DPoP-bound tokens with unbound (bearer) ones: they
    /// were refused (RFC 9449 §5), and the refresh token they replaced may be spent, so the login
    /// ends; a new one is needed (and the provider's registration of the client checked).
    case unboundTokens
}

/// Told when the user is logged out (as the Schibsted SDK's `userDidLogout`); held weakly.
public protocol AuthenticatedSessionDelegate: AnyObject, Sendable {
    /// Called once the user is logged out and the stored login is deleted, after
    /// ``SessionEvent/loggedOut(_:)`` went to ``AuthenticatedSession/events``.
    func userDidLogout(reason: LogoutReason)
}
