internal import Foundation
public import Logging

/// This client at that provider (OIDC Core's relying party): the one value the common paths start
/// from. It holds configuration and shared caches only (the provider, the client, its token
/// client, the provider's keys), never a token, a store or any other state, so one value serves
/// every login and every session of an app or a server.
///
/// ```swift
/// let rp = try await RelyingParty.discover(issuer: "https://login.example.com", clientID: "my-cli")
/// let login = try await rp.loopbackLogin().runLogin { url in print("Opening \(url)") }
/// let store = try FileKeychain()
/// try await rp.save(login, in: store, as: key)
/// let session = rp.session(store: store, key: key, allowlist: .default(for: api))
/// ```
///
/// Each method is a short composition of the public parts underneath (``TokenClient``,
/// ``AuthorizationRequest``, ``LoopbackRedirectListener``, ``JWKSCache``, ``AuthenticatedSession``),
/// which stay available for anything the facade does not cover.
public struct RelyingParty: Sendable {
    /// The provider: its issuer, endpoints and quirks.
    public var provider: ProviderConfiguration { tokenClient.provider }
    /// This client's `client_id`.
    public var clientID: String { tokenClient.clientID }
    /// The client of the provider's token, revocation and userinfo endpoints, with this client's
    /// authentication.
    public let tokenClient: TokenClient
    /// The provider's keys, cached and shared by every login and session of this relying party;
    /// `nil` when the provider publishes no `jwks_uri` (then no login can complete).
    public let keys: JWKSCache?
    /// Where the relying party's parts log (``TokenClient``, ``JWKSCache``, the loopback listener
    /// and the sessions it makes); a logger that discards everything unless one was given.
    public let logger: Logger?
    /// The transport every request goes through.
    public var transport: any HTTPTransport { tokenClient.transport }
    /// The settings every login and session of this relying party follow, given when it was made:
    /// the front channel, DPoP, the security profile, the response mode.
    public internal(set) var configuration: Configuration
    /// The DPoP nonces of the provider and its APIs, shared by copies of this relying party.
    let dpopNonces = DPoPNonces()
    /// The protected resource this relying party was made for (``forResource(_:clientID:authorizationServer:registrations:clientName:callbackPort:transport:requestOptions:logger:configuration:)``);
    /// `nil` for one made from an issuer.
    public internal(set) var protectedResource: DiscoveredResource?

    /// A relying party of a provider whose endpoints are known (a preset, or a configuration built
    /// by hand): nothing is fetched.
    ///
    /// A client secret given for a provider configured with ``ClientAuthenticationMethod/none`` is
    /// sent with `client_secret_basic`, RFC 6749 §2.3.1's default, rather than ignored
    /// (`ClientAuthentication.init(secret:for:)`).
    ///
    /// - Parameters:
    ///   - provider: the provider's endpoints and quirks.
    ///   - clientID: this client's `client_id`.
    ///   - clientSecret: the secret of a confidential client (a server); `nil` for a public one.
    ///   - transport: sends every request; the shared ``NIOHTTPTransport`` by default.
    ///   - requestOptions: timeout and size limit of the token-endpoint requests.
    ///   - logger: where every part logs, never a secret; `nil` (the default) logs nothing. To give
    ///     each part its own label, build the parts and use ``init(tokenClient:keys:logger:configuration:)``.
    ///   - configuration: the settings of every login and session; the defaults when not given.
    public init(
        provider: ProviderConfiguration, clientID: String, clientSecret: Secret? = nil,
        transport: any HTTPTransport = NIOHTTPTransport.shared, requestOptions: HTTPRequestOptions = HTTPRequestOptions(),
        logger: Logger? = nil, configuration: Configuration = Configuration()
    ) {
        self.init(
            provider: provider, clientID: clientID, authentication: ClientAuthentication(secret: clientSecret, for: provider), transport: transport,
            requestOptions: requestOptions, logger: logger, configuration: configuration
        )
    }

    /// A relying party of a provider whose endpoints are known, whose client authenticates with
    /// `authentication`: a private key (`private_key_jwt`), an HMAC assertion, a secret, or nothing.
    ///
    /// - Parameters:
    ///   - provider: the provider's endpoints and quirks.
    ///   - clientID: this client's `client_id`.
    ///   - authentication: how the client proves itself at every endpoint.
    ///   - transport: sends every request; the shared ``NIOHTTPTransport`` by default.
    ///   - requestOptions: timeout and size limit of the provider's endpoints.
    ///   - logger: where every part logs, never a secret; `nil` (the default) logs nothing.
    ///   - configuration: the settings of every login and session; the defaults when not given.
    public init(
        provider: ProviderConfiguration, clientID: String, authentication: ClientAuthentication,
        transport: any HTTPTransport = NIOHTTPTransport.shared, requestOptions: HTTPRequestOptions = HTTPRequestOptions(),
        logger: Logger? = nil, configuration: Configuration = Configuration()
    ) {
        let client = TokenClient(
            provider: provider, clientID: clientID, authentication: authentication, transport: transport, requestOptions: requestOptions,
            logger: logger
        )
        let keys = provider.jwksURI.map { JWKSCache(transport: transport, jwksURI: $0, logger: logger) }
        self.init(tokenClient: client, keys: keys, logger: logger, configuration: configuration)
    }

    /// A relying party from its parts, for a token client or key cache configured beyond what
    /// ``init(provider:clientID:clientSecret:transport:requestOptions:logger:configuration:)`` offers
    /// (a logger per part, a clock, a key cache's ages).
    /// The configuration's ``Configuration/providerStages`` run after the token client's own stages
    /// (in place of those of the configuration `tokenClient` was made with, if it came from another
    /// relying party: they never run twice).
    public init(tokenClient: TokenClient, keys: JWKSCache?, logger: Logger? = nil, configuration: Configuration = Configuration()) {
        var tokenClient = tokenClient
        tokenClient.configurationStages = configuration.providerStages
        tokenClient.requestStages = configuration.providerRequestStages
        tokenClient.callStages = configuration.callStages
        self.tokenClient = tokenClient
        self.keys = keys
        self.logger = logger
        self.configuration = configuration
    }

    /// A relying party of the provider that publishes its metadata at `issuer` (OpenID Connect
    /// Discovery, or RFC 8414), as ``ProviderConfiguration/discover(issuer:preset:confidential:transport:requestOptions:logger:)``
    /// finds it. With a `preset`, the preset's quirks (client authentication, extra headers, issuer
    /// matching, default scopes) are laid over the discovered endpoints. Without one, a
    /// confidential client authenticates as the provider's `token_endpoint_auth_methods_supported`
    /// allows, and logins ask for `openid` (plus `offline_access` when the provider offers it)
    /// unless told otherwise. `requestOptions` (a timeout, say) hold for the discovery and every
    /// later call to the provider.
    ///
    /// - Throws: what ``ProviderDiscovery/metadata(for:)`` throws (`issuerMismatch`, transient
    ///   errors, …). Metadata without an authorization endpoint is accepted (a provider for client
    ///   credentials or the device flow only); a browser login then says what is missing.
    public static func discover(
        issuer: String, clientID: String, clientSecret: Secret? = nil, preset: ProviderConfiguration? = nil,
        transport: any HTTPTransport = NIOHTTPTransport.shared, requestOptions: HTTPRequestOptions = HTTPRequestOptions(),
        logger: Logger? = nil, configuration: Configuration = Configuration()
    ) async throws(OIDCError) -> RelyingParty {
        let provider = try await ProviderConfiguration.discover(
            issuer: issuer, preset: preset, confidential: clientSecret != nil, transport: transport, requestOptions: requestOptions, logger: logger)
        return RelyingParty(
            provider: provider, clientID: clientID, clientSecret: clientSecret, transport: transport, requestOptions: requestOptions, logger: logger,
            configuration: configuration)
    }

    /// A relying party of the provider at `issuer`, by discovery, whose client authenticates with
    /// `authentication` (a preset's quirks laid over the discovered endpoints, as with a secret).
    ///
    /// - Throws: what ``ProviderDiscovery/metadata(for:)`` throws.
    public static func discover(
        issuer: String, clientID: String, authentication: ClientAuthentication, preset: ProviderConfiguration? = nil,
        transport: any HTTPTransport = NIOHTTPTransport.shared, requestOptions: HTTPRequestOptions = HTTPRequestOptions(),
        logger: Logger? = nil, configuration: Configuration = Configuration()
    ) async throws(OIDCError) -> RelyingParty {
        let provider = try await ProviderConfiguration.discover(
            issuer: issuer, preset: preset, transport: transport, requestOptions: requestOptions, logger: logger)
        return RelyingParty(
            provider: provider, clientID: clientID, authentication: authentication, transport: transport, requestOptions: requestOptions,
            logger: logger, configuration: configuration)
    }

    /// ``keys``, or the one error that says a login cannot complete without them: for a flow built
    /// from the parts, before anything is sent.
    ///
    /// - Throws: ``OIDCError/Code/missingParameter`` when the provider publishes no `jwks_uri`.
    package func requireKeys() throws(OIDCError) -> JWKSCache {
        guard let keys else {
            throw OIDCError(
                .missingParameter,
                "The provider \(provider.issuer) publishes no jwks_uri, so its ID tokens cannot be verified and no login can complete; set ProviderConfiguration.jwksURI, or use discovery.",
                context: ["issuer": provider.issuer]
            )
        }
        return keys
    }
}
