public import Foundation
public import OIDC
public import OIDCTesting

/// The parts of an ``AuthenticatedSession`` over a running ``TestProvider``, for the session tests
/// of every store: the provider, a transport, the store, a token client made by discovery, and
/// the key the login is kept under.
public struct SessionFixture<Store: TokenStore>: Sendable {
    public let provider: TestProvider
    public let transport: NIOHTTPTransport
    public let store: Store
    public let client: TokenClient
    public let key: TokenStoreKey

    /// Discovers `provider` through `transport` and makes its token client for `clientID`.
    public init(
        provider: TestProvider, transport: NIOHTTPTransport, store: Store, key: TokenStoreKey,
        clientID: String = TestProvider.Client.default.id
    ) async throws {
        let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
        self.provider = provider
        self.transport = transport
        self.store = store
        self.key = key
        client = TokenClient(provider: try metadata.configuration(), clientID: clientID, transport: transport)
    }

    /// A session of the login under ``key``: in ``store`` (or `store`), refreshed through
    /// ``client`` (or `source`), sending through ``transport`` (or `transport`) to the provider's host.
    public func session(
        store: (any TokenStore)? = nil, source: AuthenticatedSession.TokenSource? = nil, transport: (any HTTPTransport)? = nil,
        options: AuthenticatedSession.Options = AuthenticatedSession.Options(), now: @escaping @Sendable () -> Date = { Date() }
    ) -> AuthenticatedSession {
        AuthenticatedSession(
            store: store ?? self.store, key: key, source: source ?? .refreshToken(client), transport: transport ?? self.transport,
            allowlist: .default(for: URL(string: provider.issuer)!), options: options, now: now
        )
    }

    /// The provider's keys, for refreshed ID tokens.
    public var keys: AuthenticatedSession.Options {
        AuthenticatedSession.Options(refreshedIDTokenKeys: JWKSCache(transport: transport, jwksURI: URL(string: provider.jwksURI)!))
    }

    /// A GET of the provider's protected resource.
    public var resource: HTTPRequest { HTTPRequest(url: URL(string: provider.protectedResourceURL)!) }

    /// Logs the test user in, with the stored access token already expired when `expired` (10 s ago).
    @discardableResult
    public func logIn(expired: Bool = false) async throws -> StoredLogin {
        var tokens = try await provider.issueTokens()
        if expired { tokens.expiresAt = Date().addingTimeInterval(-10) }
        return try await store.inject(tokens, issuer: provider.issuer, clientID: client.clientID, key: key)
    }
}
