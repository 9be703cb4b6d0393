import Foundation
import OIDC

/// A terminal tool's login: discovery, the loopback redirect, the code exchange with PKCE, the
/// verified ID token, the FileKeychain, and API calls with the stored token.
public struct TerminalLogin: Sendable {
    public var issuer: String
    public var clientID: String
    public var scopes: [String]
    public var keychain: FileKeychain
    public var transport: any HTTPTransport

    /// Where the login is kept in the keychain: one entry per client id.
    public var key: TokenStoreKey { TokenStoreKey(service: "terminal-login", account: clientID) }

    public init(
        issuer: String, clientID: String, scopes: [String] = ["openid", "offline_access"], keychain: FileKeychain,
        transport: any HTTPTransport
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.scopes = scopes
        self.keychain = keychain
        self.transport = transport
    }

    /// Logs the user in through the browser and stores the verified login.
    ///
    /// `show` is given the URL to print before the browser is asked to open it, so a user whose
    /// browser does not start can still paste it. The provider must accept the redirect URI
    /// `http://127.0.0.1/callback` on any port (RFC 8252 §7.3).
    public func logIn(
        browser: any BrowserLauncher, timeout: Duration = .seconds(180), show: @Sendable (URL) -> Void = { _ in }
    ) async throws -> StoredLogin {
        let provider = try await providerConfiguration()
        let listener = try await LoopbackRedirectListener.start()  // 127.0.0.1, a port the system chooses
        let request: AuthorizationRequest
        do {
            request = try AuthorizationRequest(
                provider: provider, clientID: clientID, redirectURI: listener.redirectURI, scopes: scopes
            )
            try listener.serve(request)  // the one-time start URL now redirects to the provider
        } catch {
            await listener.close()
            throw error
        }
        show(listener.startURL)
        do {
            try await browser.open(listener.startURL)
        } catch {
            // No browser: the URL is on the screen; the listener keeps waiting for it.
        }
        // The state and RFC 9207's `iss` are checked here; a wrong state is answered and ignored.
        let response = try await listener.waitForAuthorization(request, timeout: timeout)

        guard let jwksURI = provider.jwksURI else {
            throw TerminalLoginError.noJWKS(issuer)
        }
        let client = TokenClient(provider: provider, clientID: clientID, transport: transport)
        let verified = try await client.completeLogin(
            response, for: request, keys: JWKSCache(transport: transport, jwksURI: jwksURI)
        )
        let login = StoredLogin(verified, clientID: clientID)
        try keychain.save(login, for: key)
        return login
    }

    /// A session that sends the stored access token to `api`'s host (and its subdomains) only,
    /// refreshes it before it expires and once on a 401, and logs out when the refresh is refused.
    public func session(for api: URL) async throws -> AuthenticatedSession {
        let client = TokenClient(provider: try await providerConfiguration(), clientID: clientID, transport: transport)
        return AuthenticatedSession(
            store: keychain, key: key, source: .refreshToken(client), transport: transport, allowlist: .default(for: api)
        )
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

    private func providerConfiguration() async throws -> ProviderConfiguration {
        try await ProviderDiscovery(transport: transport).metadata(for: issuer).configuration()
    }
}

/// What this example adds to ``OIDCError``.
public enum TerminalLoginError: Error, CustomStringConvertible {
    case noJWKS(String)

    public var description: String {
        switch self {
        case .noJWKS(let issuer): "\(issuer) publishes no jwks_uri, so its ID tokens cannot be verified."
        }
    }
}
