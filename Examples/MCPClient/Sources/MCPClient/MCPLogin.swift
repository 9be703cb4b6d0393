import Foundation
import OIDC

/// The login behind an MCP server's connection: a relying party at the server's authorization
/// server, its loopback login (RFC 8252: a listener on 127.0.0.1, the browser, PKCE), the login kept
/// in a `FileKeychain` under the server's URL, and the session that keeps its tokens fresh.
public struct MCPLogin: Sendable {
    /// This client at the authorization server.
    public let relyingParty: RelyingParty
    /// Where the login is kept (0600 files in a 0700 directory), across runs.
    public let keychain: FileKeychain
    /// The MCP server's endpoint, which is the resource the tokens are for.
    public let resource: URL

    public init(relyingParty: RelyingParty, keychain: FileKeychain, resource: URL) {
        self.relyingParty = relyingParty
        self.keychain = keychain
        self.resource = resource
    }

    /// Where the login is kept in the keychain: one entry per MCP server.
    public var key: TokenStoreKey { TokenStoreKey(service: "mcp-client", account: resource.absoluteString) }

    /// The authorization server at `issuer` (discovery), with the client id `clientID` registered there.
    public static func discover(
        issuer: String, clientID: String, resource: URL, keychain: FileKeychain, transport: any HTTPTransport
    ) async throws -> MCPLogin {
        MCPLogin(relyingParty: try await RelyingParty.discover(issuer: issuer, clientID: clientID, transport: transport), keychain: keychain, resource: resource)
    }

    /// Logs the user in through `browser` asking for `scopes` (the relying party's default when
    /// `nil`), and keeps the login. `show` gets the URL first, for a user whose browser does not start.
    @discardableResult
    public func logIn(
        scopes: [String]? = nil, browser: any BrowserLauncher, timeout: Duration = .seconds(180), show: @escaping @Sendable (URL) -> Void = { _ in }
    ) async throws -> StoredLogin {
        var login = relyingParty.loopbackLogin(scopes: scopes)
        login.browser = browser
        login.timeout = timeout
        let verified = try await login.run(showing: show)
        return try await relyingParty.save(verified, in: keychain, as: key)
    }

    /// The kept login's session: the token only to the MCP server's host, refreshed before it
    /// expires and under the keychain's lock.
    public func session() -> AuthenticatedSession {
        relyingParty.session(store: keychain, key: key, allowlist: .default(for: resource))
    }
}
