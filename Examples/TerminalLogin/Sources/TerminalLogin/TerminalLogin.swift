import Foundation
import OIDC

/// A terminal tool's login with the library alone: the provider as a `RelyingParty` (discovery),
/// its loopback login (RFC 8252: listener on 127.0.0.1, the system browser, PKCE, the verified ID
/// token), the login kept in a `FileKeychain`, and API calls through its `AuthenticatedSession`.
public struct TerminalLogin: Sendable {
    /// This tool at the provider.
    public let relyingParty: RelyingParty
    /// Where the login is kept.
    public let keychain: FileKeychain
    /// Where the login is kept in the keychain: one entry per client id.
    public var key: TokenStoreKey { TokenStoreKey(service: "terminal-login", account: relyingParty.clientID) }

    public init(relyingParty: RelyingParty, keychain: FileKeychain) {
        self.relyingParty = relyingParty
        self.keychain = keychain
    }

    /// The provider at `issuer`, by discovery.
    public static func discover(issuer: String, clientID: String, keychain: FileKeychain, transport: any HTTPTransport) async throws -> TerminalLogin {
        TerminalLogin(relyingParty: try await RelyingParty.discover(issuer: issuer, clientID: clientID, transport: transport), keychain: keychain)
    }

    /// Logs the user in through the browser and keeps the verified login. `show` gets the URL before
    /// the browser is asked to open it, so a user whose browser does not start can paste it.
    public func logIn(browser: any BrowserLauncher, timeout: Duration = .seconds(180), show: @escaping @Sendable (URL) -> Void = { _ in }) async throws -> StoredLogin {
        var login = relyingParty.loopbackLogin(scopes: ["openid", "offline_access"])
        login.browser = browser
        login.timeout = timeout
        return try await relyingParty.save(try await login.runLogin(showing: show), in: keychain, as: key)
    }

    /// A session that sends the stored access token to `api`'s host (and its subdomains) only,
    /// refreshes it before it expires and once on a 401, and logs out when the refresh is refused.
    public func session(for api: URL) -> AuthenticatedSession {
        relyingParty.session(store: keychain, key: key, allowlist: .default(for: api))
    }

    /// `GET url` with the bearer token; the body as text.
    public func call(_ url: URL) async throws -> (status: Int, body: String) {
        let response = try await session(for: url).send(HTTPRequest(url: url))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Revokes the refresh token at the provider, then deletes the stored login.
    public func logOut(api: URL) async throws {
        try await session(for: api).logout()
    }
}
