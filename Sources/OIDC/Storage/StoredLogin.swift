internal import Foundation

/// One login as a ``TokenStore`` keeps it: the tokens and what is needed to use and refresh them.
///
/// The nouns of a login: a ``VerifiedLogin`` is one just completed (its ID token checked), a
/// `StoredLogin` is one kept in a store, and a ``TokenSet`` is the tokens inside both.
public struct StoredLogin: Sendable, Equatable {
    /// The login's tokens.
    public var tokens: TokenSet
    /// The issuer the tokens came from, as configured.
    public var issuer: String
    /// The client the tokens were issued to.
    public var clientID: String
    /// The ID token's `sub`, when known: who is logged in.
    public var subject: String?
    /// The ID token's `sid`, when the provider sent one: the user's session at the provider, which
    /// a back-channel logout names (OIDC Back-Channel Logout 1.0 §2.4) to log this login out
    /// (``TokenStore/deleteLogins(_:)``). `nil` for logins stored without it.
    public var sessionID: String?
    /// The provider the login was made with, as configured (endpoints, client authentication method,
    /// extra token-request headers, issuer matching): enough to refresh and revoke it without
    /// discovery. `nil` for logins stored without one (older files, injected tokens).
    public var provider: ProviderConfiguration?
    /// Anything else the application wants to remember with the login, such as the profile name.
    /// Never put a secret here: attributes are shown by `oidc status`.
    public var attributes: [String: String]
    /// How the tokens were granted, when that decides how new ones are had: a client's own tokens
    /// (``Grant/clientCredentials(scopes:parameters:)``) are asked for again with the same scopes
    /// and parameters. `nil` for a person's login through the browser, and for logins stored
    /// without it.
    public var grant: Grant?
    /// The refresh of this login marked in flight (stores whose lock can be lost,
    /// ``TokenStore/lockCanBeLost``); kept by the store, never shown by a session.
    package var refreshMark: RefreshMark?
    /// The DPoP key the tokens are bound to (RFC 9449), kept with them: the session signs its
    /// proofs with it, at the resource servers and at refresh. `nil` for bearer tokens. Setting
    /// it sets ``dpopThumbprint``.
    public var dpopKey: DPoPKey? {
        didSet { dpopThumbprint = dpopKey?.thumbprint }
    }
    /// The RFC 7638 thumbprint (`jkt`) of the key the tokens are bound to, kept even when the key
    /// itself is missing, so that a lost or different key is told apart from bearer tokens: the
    /// session then asks to log in again instead of sending tokens nobody can prove.
    public internal(set) var dpopThumbprint: String?
    /// The `resource` (RFC 8707) the login was made for: every refresh sends the same value.
    /// `nil` for logins made without one.
    public var resource: String?
    /// The ID token this login was completed with, verified (signature, issuer, audience, times,
    /// nonce, `at_hash`, OIDC Core §3.1.3.7) and its claims read: `auth_time`, `acr`, `amr`, the
    /// user's profile claims. Set by the logins that verify one (``LoopbackLogin/runLogin(showing:)``,
    /// ``DeviceLogin/waitForLogin()``, ``init(_:attributes:)``); `nil` for a plain OAuth login, a
    /// device grant that sent no ID token, and a login read back from a store: stores keep the
    /// token itself (``TokenSet/idToken``), not this reading of it, which held when it was made.
    /// Not part of `==`.
    public var idToken: IDToken? {
        get { verifiedIDToken.value }
        set { verifiedIDToken = Unkept(newValue) }
    }
    private var verifiedIDToken = Unkept<IDToken>(nil)

    /// A login from its parts.
    public init(
        tokens: TokenSet, issuer: String, clientID: String, subject: String? = nil, provider: ProviderConfiguration? = nil,
        attributes: [String: String] = [:]
    ) {
        self.tokens = tokens
        self.issuer = issuer
        self.clientID = clientID
        self.subject = subject
        self.provider = provider
        self.attributes = attributes
    }

    /// The login to keep after a completed login (``RelyingParty/completeLogin(callback:for:now:)``,
    /// ``LoopbackLogin/runLogin(showing:)``): its tokens, the configured issuer, the client, the
    /// provider, the subject (who is logged in) from the verified ID token, so that refreshed ID
    /// tokens can be tied to the same user later (OIDC Core §12.2), and its `sid`, so that a
    /// back-channel logout of that session finds the login.
    public init(_ verified: VerifiedLogin, attributes: [String: String] = [:]) {
        self.init(
            tokens: verified.tokens, issuer: verified.issuer, clientID: verified.clientID, subject: verified.idToken.claims.subject,
            provider: verified.provider, attributes: attributes
        )
        self.dpopKey = verified.dpopKey
        self.dpopThumbprint = verified.dpopKey?.thumbprint
        self.sessionID = Self.sessionID(of: verified.idToken)
        self.idToken = verified.idToken
    }

    /// The verified ID token's `sid`, when it is a non-empty string.
    static func sessionID(of idToken: IDToken) -> String? {
        guard case .string(let sid)? = idToken.claims.raw["sid"], !sid.isEmpty else { return nil }
        return sid
    }

    /// The login to keep after a completed login, with the issuer the ID token names.
    @available(*, deprecated, message: "VerifiedLogin carries its client id: use StoredLogin(_:attributes:)")
    public init(_ verified: VerifiedLogin, clientID: String, attributes: [String: String] = [:]) {
        self.init(
            tokens: verified.tokens, issuer: verified.idToken.claims.issuer, clientID: clientID, subject: verified.idToken.claims.subject,
            attributes: attributes
        )
    }
}
