import Foundation
import OIDC

/// The login behind an MCP server's connection, found from the server's URL alone: swift-oidc's
/// `RelyingParty.forResource` (the server's 401 and RFC 9728 metadata, its authorization server by
/// RFC 8414 or OpenID discovery, this client registered there by RFC 7591 once and the registration
/// reused, `resource` on every request), its loopback login (RFC 8252: a listener on 127.0.0.1 on
/// the registered port, the browser, PKCE), the login kept in a `FileKeychain`, and the session
/// that keeps its tokens fresh.
public struct MCPLogin: Sendable {
    /// This client at the server's authorization server.
    public let relyingParty: RelyingParty
    /// Where the login is kept (0600 files in a 0700 directory), across runs.
    public let keychain: FileKeychain
    /// The MCP server's endpoint, which is also the resource the tokens are for.
    public let resource: URL
    /// The name of this login among those for the same server (`default` unless given).
    public let profile: String

    public init(relyingParty: RelyingParty, keychain: FileKeychain, resource: URL, profile: String = "default") {
        self.relyingParty = relyingParty
        self.keychain = keychain
        self.resource = resource
        self.profile = profile
    }

    /// Where the login is kept in the keychain: one entry per MCP server and profile.
    public var key: TokenStoreKey { TokenStoreKey(service: "mcp-client", account: "\(profile) \(resource.absoluteString)") }

    /// The relying party for the MCP server at `endpoint`, from its URL alone. `clientID` is a
    /// client id registered there, if you have one; otherwise the client registers itself (once per
    /// authorization server: the registration is kept in `registrations` and reused by every
    /// profile). DPoP-bound tokens (RFC 9449) when the server's metadata says it requires them
    /// (`dpop_bound_access_tokens_required`: swift-oidc turns DPoP on by itself then), and always
    /// when `dpop` is `true`.
    public static func forResource(
        _ endpoint: URL, clientID: String? = nil, registrations: any RegistrationStore, keychain: FileKeychain, profile: String = "default",
        dpop: Bool? = nil, transport: any HTTPTransport
    ) async throws -> MCPLogin {
        let relyingParty = try await RelyingParty.forResource(
            endpoint, clientID: clientID, registrations: registrations, clientName: "swift-oidc MCPClient", transport: transport,
            configuration: RelyingParty.Configuration(dpop: dpop == true ? .on : .off))
        return MCPLogin(relyingParty: relyingParty, keychain: keychain, resource: endpoint, profile: profile)
    }

    /// Logs the user in through `browser` asking for `scopes` (without any: the server's 401's
    /// `scope`, else its metadata's `scopes_supported`), and keeps the login. `show` gets the URL
    /// first, for a user whose browser does not start.
    @discardableResult
    public func logIn(
        scopes: [String]? = nil, browser: any BrowserLauncher, timeout: Duration = .seconds(180), show: @escaping @Sendable (URL) -> Void = { _ in }
    ) async throws -> StoredLogin {
        var login = relyingParty.loopbackLogin(scopes: scopes)
        login.browser = browser
        login.timeout = timeout
        return try await relyingParty.save(try await login.runLogin(showing: show), in: keychain, as: key)
    }

    /// The kept login, if there is one.
    public func storedLogin() throws -> StoredLogin? { try keychain.load(key) }

    /// The kept login's session: the token only to the MCP server's host, refreshed before it
    /// expires and under the keychain's lock.
    public func session() -> AuthenticatedSession {
        relyingParty.session(store: keychain, key: key, allowlist: .default(for: resource))
    }
}
