public import Foundation
internal import Hummingbird
public import OIDC
public import OIDCResourceServer

/// "Sign in with your provider" for a Hummingbird web app: the authorization code flow with PKCE,
/// its state bound to the browser by a cookie, the tokens kept on the server (in any
/// `TokenStore`: `InMemoryTokenStore` for one instance, `PostgresTokenStore` for a fleet) under a
/// session cookie, refreshed when they expire, RP-initiated logout by `POST` with a CSRF check,
/// and back-channel logout (OIDC Back-Channel Logout 1.0) ending every session of the user or of
/// the provider's session.
///
/// ```swift
/// let signIn = try WebSignIn(relyingParty: rp, redirectURI: URL(string: "https://app.example/auth/callback")!)
/// let router = Router(context: BasicSignInRequestContext.self)
/// signIn.addRoutes(to: router)
/// router.group().add(middleware: signIn.requireSignIn()).get("/") { _, context in
///     "Hello, \(try context.requireSignedIn().subject ?? "")"
/// }
/// ```
///
/// Routes (``addRoutes(to:)``): `GET /auth/login?return=/path` starts a login; the redirect URI's
/// path finishes it; `POST /auth/logout` (form field `csrf`: ``SignedIn/csrfToken``) ends the
/// session, revokes the refresh token and sends the browser to the provider's end-session
/// endpoint when it has one; `POST /auth/backchannel-logout` takes the provider's logout tokens
/// when ``backChannelLogout`` is set (register it as the client's `backchannel_logout_uri`).
///
/// Cookies are `HttpOnly`, `SameSite=Lax` (the browser comes back from the provider's site, a
/// cross-site top-level navigation), and `Secure` unless the redirect URI is `http` on a loopback
/// address; on https they are `__Host-` cookies (path `/`, no `Domain`). The session id is new at
/// every sign-in (a session id planted before it is worthless), is a 256-bit random value, and is
/// never a store key: the store keeps its SHA-256.
public struct WebSignIn: Sendable {
    /// The relying party: this client at its provider.
    public let relyingParty: RelyingParty
    /// Where the sessions' tokens are kept.
    public let sessions: any TokenStore
    /// The redirect URI registered with the provider; its path is the callback route.
    public let redirectURI: URL
    /// The scopes asked for (the provider's defaults when `nil`; `openid` always).
    public var scopes: [String]?
    /// Where the provider sends the browser after an RP-initiated logout (registered with it as a
    /// `post_logout_redirect_uri`); `nil`: none is sent, the provider shows its own page.
    public var postLogoutRedirectURI: URL?
    /// Where a signed-out browser goes when the provider has no end-session endpoint: `/`.
    public var signedOutPath = "/"
    /// The route that starts a login: `/auth/login`.
    public var loginPath = "/auth/login"
    /// The route that ends a session: `/auth/logout` (POST).
    public var logoutPath = "/auth/logout"
    /// The route of back-channel logout: `/auth/backchannel-logout` (POST), served when ``backChannelLogout`` is set.
    public var backChannelLogoutPath = "/auth/backchannel-logout"
    /// The provider's logout tokens, checked (and their `jti`s remembered) by this endpoint; `nil`:
    /// no back-channel logout route.
    public var backChannelLogout: BackChannelLogoutEndpoint?
    /// How long a session lasts without a sign-in, whatever its tokens say: 30 days. The cookie
    /// expires then, and ``RequireSignIn`` ends an older session on the server too.
    public var sessionLifetime: Duration = .seconds(30 * 86_400)

    /// Logins between ``loginPath`` and the callback, by the browser's login cookie.
    let pending: PendingAuthorizations

    /// Web sign-in for `relyingParty`, whose redirect URI (registered with the provider) is
    /// `redirectURI`, keeping the sessions' tokens in `sessions` (in memory by default: one
    /// instance, lost at restart).
    ///
    /// - Throws: `OIDCError` (`invalidArgument`) for a redirect URI that is not an absolute
    ///   `https` URL, or `http` on a loopback address.
    public init(relyingParty: RelyingParty, redirectURI: URL, sessions: any TokenStore = InMemoryTokenStore(), pending: PendingAuthorizations = PendingAuthorizations()) throws(OIDCError) {
        guard let host = redirectURI.host(), redirectURI.scheme == "https" || (redirectURI.scheme == "http" && Self.isLoopback(host)),
            !redirectURI.path().isEmpty
        else {
            throw OIDCError(.invalidArgument, "The redirect URI must be an https URL with a path (http only on a loopback address), as registered with the provider.")
        }
        self.relyingParty = relyingParty
        self.redirectURI = redirectURI
        self.sessions = sessions
        self.pending = pending
    }

    /// Whether the cookies are `Secure` (and `__Host-`): unless the app is `http` on loopback.
    public var secureCookies: Bool { redirectURI.scheme == "https" }
    /// The session cookie's name: `__Host-oidc_session` on https, `oidc_session` otherwise.
    public var sessionCookie: String { secureCookies ? "__Host-oidc_session" : "oidc_session" }
    /// The cookie of a login in progress: `__Host-oidc_login` on https, `oidc_login` otherwise.
    public var loginCookie: String { secureCookies ? "__Host-oidc_login" : "oidc_login" }
    /// The cookie of where to go back after the login: `__Host-oidc_return` on https, `oidc_return` otherwise.
    var returnCookie: String { secureCookies ? "__Host-oidc_return" : "oidc_return" }

    /// The store key of a session: its id's SHA-256, never the id itself (a bearer secret, while
    /// store keys appear in errors, logs and tables).
    func key(forSession id: String) throws(OIDCError) -> TokenStoreKey {
        try TokenStoreKey(service: "oidc-web-sign-in", hashingAccount: Secret(id))
    }

    /// The session's tokens in use: refreshed when they expire (under the store's lock, so two
    /// requests refresh once), a refused refresh ending the session.
    func session(forKey key: TokenStoreKey) -> AuthenticatedSession {
        relyingParty.session(store: sessions, key: key, allowlist: .default(for: redirectURI))
    }

    /// A cookie as every cookie here is set: `HttpOnly`, `SameSite=Lax`, path `/`, `Secure` off loopback.
    func cookie(_ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: secureCookies, httpOnly: true, sameSite: .lax)
    }

    /// The return path as the return cookie holds it: base64url, so that no character of the
    /// path (`;`, `,`, `"`, a space, non-ASCII) reaches the `Set-Cookie` line.
    static func cookieValue(returning path: String) -> String { Base64URLEncoding.encode(Array(path.utf8)) }

    /// The return path the return cookie holds, checked again (``localPath(_:)``).
    static func returnPath(fromCookie value: String?) -> String? {
        guard let value, let bytes = Base64URLEncoding.decode(value) else { return nil }
        return localPath(String(decoding: bytes, as: UTF8.self))
    }

    /// Whether the session of `login` began less than ``sessionLifetime`` ago (the attribute
    /// ``signedInAtAttribute``, by the relying party's clock); one that does not say is not.
    func isLive(_ login: StoredLogin) -> Bool {
        guard let began = login.attributes[Self.signedInAtAttribute].flatMap(TimeInterval.init) else { return false }
        return relyingParty.tokenClient.now().timeIntervalSince1970 - began <= Double(sessionLifetime.components.seconds)
    }

    /// The attribute of the stored login that holds when its session began (seconds since 1970).
    static let signedInAtAttribute = "web.signed-in-at"

    /// A path of this app to go back to: `/` and a path under it, never `//host` or `/\host` (an
    /// open redirect), at most 2,048 characters.
    static func localPath(_ text: String?) -> String? {
        guard let text, text.hasPrefix("/"), !text.hasPrefix("//"), !text.hasPrefix("/\\"), text.count <= 2048,
            !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F || $0 == "\\" })
        else { return nil }
        return text
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "localhost"
    }
}
