public import Foundation
public import OIDC

/// A small OpenID provider for tests, running in-process on a loopback address with an ephemeral
/// port: discovery, JWKS (an RSA and an EC key), authorization code flow with PKCE, refresh-token
/// rotation with reuse detection, userinfo, revocation, end-session and a protected resource
/// (`/api/me`), DPoP-bound tokens (``Configuration/dpop``), plus fault injection and request counters.
///
/// ```swift
/// try await withTestProvider { provider in
///     let metadataURL = provider.discoveryURL   // http://127.0.0.1:PORT/.well-known/openid-configuration
///     await provider.failNextTokenRequests(1, with: .serviceUnavailable)
///     // … drive a client against provider.issuer …
///     #expect(await provider.grantCount("refresh_token") == 1)
/// }
/// ```
///
/// It binds only `127.0.0.1` (or `::1`) and speaks plain HTTP, or https with a test certificate
/// (``Configuration/tls``): it is a test fixture, not a provider to expose. Call ``shutdown()`` when done, or use ``withTestProvider(_:_:)``, which always does.
public final class TestProvider: Sendable {
    /// The configuration the provider was started with.
    public let configuration: Configuration
    /// `http://127.0.0.1:PORT` (`https://` with ``Configuration/tls``) followed by ``Configuration/issuerPath``.
    public let issuer: String
    /// The bound port.
    public let port: Int
    let state: ProviderState
    private let server: HTTPServer

    private init(configuration: Configuration, issuer: String, port: Int, state: ProviderState, server: HTTPServer) {
        self.configuration = configuration
        self.issuer = issuer
        self.port = port
        self.state = state
        self.server = server
    }

    /// Generates the keys, binds the loopback address and starts serving.
    ///
    /// - Throws: an `OIDCError` with code `invalidArgument` for a configuration it refuses (a host that is
    ///   not a loopback IP literal, among others: see ``Configuration``); NIO's error when the port
    ///   cannot be bound.
    public static func start(_ configuration: Configuration = .init()) async throws -> TestProvider {
        try configuration.validate()
        let state = ProviderState(configuration: configuration, keys: try KeyRing())
        let router = Router(configuration: configuration, state: state)
        let server = try await HTTPServer.start(
            host: configuration.host, port: configuration.port,
            limits: HTTPServer.Limits(maximumBodySize: configuration.maximumRequestBodySize, connections: configuration.connectionLimits), tls: configuration.tls,
            requestsClientCertificates: configuration.mutualTLS != nil,
            handler: { request in await router.handle(request) }
        )
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let scheme = configuration.tls == nil ? "http" : "https"
        let issuer = "\(scheme)://\(host):\(server.port)\(configuration.issuerPath)"
        await state.setIssuer(issuer)
        return TestProvider(configuration: configuration, issuer: issuer, port: server.port, state: state, server: server)
    }

    /// Stops accepting connections, ends the open ones, and stops the event loop; returns when
    /// all of it is done. Calling it twice is harmless.
    public func shutdown() async throws {
        try await server.shutdown()
    }

    // MARK: Endpoints

    /// `{issuer}/.well-known/openid-configuration`.
    public var discoveryURL: String { issuer + ProviderPaths.discovery }
    /// `{issuer}/authorize`.
    public var authorizationEndpoint: String { issuer + ProviderPaths.authorize }
    /// `{issuer}/token`.
    public var tokenEndpoint: String { issuer + ProviderPaths.token }
    /// `{issuer}/jwks`.
    public var jwksURI: String { issuer + ProviderPaths.jwks }
    /// `{issuer}/userinfo`: the user's claims for a valid access token.
    public var userinfoEndpoint: String { issuer + ProviderPaths.userinfo }
    /// `{issuer}/revoke` (RFC 7009).
    public var revocationEndpoint: String { issuer + ProviderPaths.revocation }
    /// `{issuer}/introspect` (RFC 7662): describes an active token of the asking client.
    public var introspectionEndpoint: String { issuer + ProviderPaths.introspection }
    /// `{issuer}/logout` (RP-Initiated Logout).
    public var endSessionEndpoint: String { issuer + ProviderPaths.endSession }
    /// `{issuer}/api/me`: 200 with a valid access token, 401 otherwise.
    public var protectedResourceURL: String { issuer + ProviderPaths.protectedResource }

    // MARK: Keys

    /// New RSA and EC keys with new `kid`s sign from now on; the previous ones stay published for
    /// ``Configuration/retainedKeyGenerations`` more rotations (one by default).
    public func rotateKeys() async throws {
        try await state.rotateKeys()
    }

    /// The JWKS document as served at ``jwksURI``.
    public func jwksJSON() async throws -> String {
        String(decoding: try await state.jwksJSON(), as: UTF8.self)
    }

    // MARK: Faults and counters

    /// The next `count` requests to the token endpoint play `fault` (one each, in order, after any
    /// already queued).
    public func failNextTokenRequests(_ count: Int, with fault: Fault) async {
        await state.addFaults(fault, count: count, endpoint: .token)
    }

    /// The next `count` requests to `endpoint` play `fault`.
    public func failNextRequests(_ count: Int, to endpoint: Endpoint, with fault: Fault) async {
        await state.addFaults(fault, count: count, endpoint: endpoint)
    }

    /// Forgets every queued fault.
    public func clearFaults() async {
        await state.clearFaults()
    }

    /// How many requests reached `endpoint`, faulted ones included.
    public func requestCount(_ endpoint: Endpoint) async -> Int {
        await state.requestCount(endpoint)
    }

    /// How many token requests carried `grant_type=grantType` (`"authorization_code"`,
    /// `"refresh_token"`, `"client_credentials"`, RFC 8693's token exchange), whatever their outcome,
    /// faulted ones included.
    public func grantCount(_ grantType: String) async -> Int {
        await state.grantCount(grantType)
    }

    /// The form parameters of every token request received, oldest first, faulted ones included
    /// (a repeated name keeps its first value; a body that is not a form is not recorded).
    ///
    /// They hold what a client sent and must keep secret — `code`, `code_verifier`,
    /// `refresh_token`, a `client_secret` — which is the point: a test can check that none of them
    /// reached a log, a message or a file.
    ///
    ///     let verifiers = await provider.tokenRequestParameters().compactMap { $0["code_verifier"] }
    public func tokenRequestParameters() async -> [[String: String]] {
        await state.requestParameters(.token)
    }

    /// The form parameters of every POST to `endpoint` (introspection, revocation, device
    /// authorization, pushed authorization, …), oldest first, recorded as
    /// ``tokenRequestParameters()`` records the token endpoint's; for ``Endpoint/authorize``, the
    /// query parameters of every GET of `/authorize` as well (and the sign-in page's form posts).
    public func requestParameters(_ endpoint: Endpoint) async -> [[String: String]] {
        await state.requestParameters(endpoint)
    }

    /// Sets every request and grant counter back to zero and forgets the recorded token requests.
    public func resetCounters() async {
        await state.resetCounters()
    }

    // MARK: Tokens, user, clock

    /// Logs the current user in for `clientID` without a browser and returns real tokens: the
    /// provider accepts the access token at ``protectedResourceURL`` and ``userinfoEndpoint``, and the
    /// refresh token at its token endpoint, exactly as after a code flow. The ID token carries
    /// `nonce` when one is given. With `dpopKeyThumbprint` (the RFC 7638 thumbprint of a DPoP key,
    /// such as `JWSSigningKey.thumbprint()`) the tokens are bound to that key as after a DPoP token
    /// request: `token_type` `DPoP`, the access token taken only with proofs by that key, and a public
    /// client's refresh token too.
    ///
    /// - Throws: `OIDCError` (`invalidArgument`) when the client is not registered.
    public func issueTokens(
        clientID: String = Client.default.id, scope: String = "openid offline_access", nonce: String? = nil,
        dpopKeyThumbprint: String? = nil
    ) async throws -> TokenSet {
        let issued: IssuedTokens
        do { issued = try await state.issueLogin(clientID: clientID, scope: scope, nonce: nonce, jkt: dpopKeyThumbprint) } catch {
            throw OIDCError(.invalidArgument, error.description ?? "The provider could not issue tokens.")
        }
        let received = await state.now
        return TokenSet(
            accessToken: Secret(issued.accessToken), tokenType: issued.tokenType, refreshToken: issued.refreshToken.map(Secret.init),
            idToken: issued.idToken.map(Secret.init), expiresAt: received.addingTimeInterval(TimeInterval(issued.expiresIn)),
            scopes: issued.scope.split(separator: " ").map(String.init), receivedAt: received
        )
    }

    /// Every access token issued so far expires now: `/api/me` and `/userinfo` answer 401 to it.
    /// Refresh tokens stay valid (for 401-then-refresh tests).
    public func expireAccessTokens() async {
        await state.expireAccessTokens()
    }

    /// The user the next sign-in produces.
    public var user: TestUser {
        get async { await state.user }
    }

    /// Changes the user the next sign-in produces; logins already made keep their user.
    public func setUser(_ user: TestUser) async {
        await state.setUser(user)
    }

    /// Moves the provider's clock forward (or back, with a negative value): code expiry, token
    /// expiry, `iat`/`exp` and the `Date` header all follow.
    public func advanceClock(by seconds: TimeInterval) async {
        await state.advanceClock(by: seconds)
    }
}

/// Starts a provider, runs `body` with it, and shuts it down whether `body` returns or throws.
public func withTestProvider<T>(
    _ configuration: TestProvider.Configuration = .init(),
    _ body: (TestProvider) async throws -> T
) async throws -> T {
    let provider = try await TestProvider.start(configuration)
    let result: T
    do {
        result = try await body(provider)
    } catch {
        try? await provider.shutdown()
        throw error
    }
    try await provider.shutdown()
    return result
}
