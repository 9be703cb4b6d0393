public import Foundation
public import Logging

extension RelyingParty {
    /// A relying party for the protected resource at `resource`, found from its URL alone
    /// (RFC 9728, RFC 8414, RFC 7591, RFC 8707; the MCP authorization spec's discovery):
    ///
    /// 1. an unauthenticated request to `resource`; a 401 whose `Bearer` (or `DPoP`) challenge
    ///    names `resource_metadata` says where the metadata is (any challenge of any field);
    ///    otherwise `/.well-known/oauth-protected-resource` with the URL's path inserted, then at
    ///    the origin's root;
    /// 2. the document's `resource` must equal the URL's identifier (scheme and host in lower
    ///    case, nothing added or removed: a trailing slash counts);
    /// 3. the authorization server: the document's first, or `authorizationServer` when it lists it;
    /// 4. its metadata by RFC 8414 (path inserted), then OpenID discovery, the `issuer` checked
    ///    exactly (RFC 8414 §3.3); PKCE with `S256` must be offered;
    /// 5. the client: `clientID` as is; an https `clientID` as a Client ID Metadata Document URL
    ///    when the server takes them; otherwise the registration kept for this issuer in
    ///    `registrations`, or a new one (RFC 7591: a native public client whose redirect URI is a
    ///    loopback callback on a fixed port), kept there for every later login.
    ///
    /// Every rule is checked before the next request, and nothing secret is sent before the last
    /// one: a refused step sends nothing further. The relying party sends the identifier as
    /// `resource` on its authorization requests and every token request (code, refresh, client
    /// credentials); its logins ask for the challenge's `scope`, else the document's
    /// `scopes_supported` when no scopes are given; its browser logins bind the registered port.
    ///
    /// A resource whose document says `dpop_bound_access_tokens_required` (RFC 9728 §2) gets
    /// DPoP-bound tokens (RFC 9449) even when `configuration` has DPoP off (the default): the
    /// relying party's ``Configuration/dpop`` is then a new key for each login, kept with the
    /// login (``StoredLogin/dpopKey``), of the first of ES256, EdDSA, PS256, ES384, ES512, RS256
    /// that the resource's and the server's `dpop_signing_alg_values_supported` both allow. A
    /// bearer token would only be refused by the resource, after the user signed in for it.
    /// A configured key or algorithm is kept as it is. To refuse such a resource instead, check
    /// ``DiscoveredResource/dpopBoundAccessTokensRequired`` of ``protectedResource``.
    ///
    /// ```swift
    /// let rp = try await RelyingParty.forResource(URL(string: "https://mcp.example.com/mcp")!, registrations: try FileRegistrationStore())
    /// let login = try await rp.loopbackLogin().runLogin { url in print("Sign in at \(url)") }
    /// ```
    ///
    /// One entry point, because the steps depend on each other (the registration needs the
    /// server, the server the metadata, the metadata the 401) and each refusal must come before
    /// the next request; the parts stay available (``ResourceIdentifier``, ``ResourceChallenge``,
    /// ``RegistrationStore``).
    ///
    /// - Parameters:
    ///   - resource: the resource's URL, such as an MCP server's endpoint.
    ///   - clientID: a pre-registered client id, or an https Client ID Metadata Document URL; `nil`
    ///     to register (or reuse a registration).
    ///   - authorizationServer: the issuer to use among the document's `authorization_servers`;
    ///     `nil` for the first.
    ///   - registrations: where registrations are kept per issuer; `nil` keeps none (a new
    ///     registration each time).
    ///   - clientName: the `client_name` of a registration.
    ///   - callbackPort: the loopback port a new registration names; `nil` picks a free one. A
    ///     stored registration's own port always wins.
    ///   - transport: sends every request; the shared ``NIOHTTPTransport`` by default.
    ///   - requestOptions: timeout and size limit of every request, discovery's and the provider's.
    ///   - logger: where discovery and every part of the relying party log, never a secret.
    ///   - configuration: the settings of every login and session; the defaults when not given.
    ///     DPoP is turned on for a resource that requires it (above).
    /// - Throws: ``OIDCError/Code/invalidArgument`` or ``OIDCError/Code/insecureEndpoint`` for a URL
    ///   that is no resource identifier; ``OIDCError/Code/insecureEndpoint`` for a
    ///   `resource_metadata` on another origin over plain http, a plain-http authorization server
    ///   named by a resource that is not plain http at the same host, or a plain-http endpoint in
    ///   an https server's metadata;
    ///   ``OIDCError/Code/resourceMismatch`` for a document naming another resource, or an
    ///   `authorizationServer` it does not list; ``OIDCError/Code/noAuthorizationServer``;
    ///   ``OIDCError/Code/issuerMismatch``; ``OIDCError/Code/pkceNotSupported``;
    ///   ``OIDCError/Code/malformedResponse`` for a document that is not JSON, an issuer outside
    ///   printable ASCII, or a registration answer without `client_id` or with one outside VSCHAR; ``OIDCError/Code/missingParameter`` when no client id is
    ///   given and the server offers no registration; the store's and the transport's errors.
    public static func forResource(
        _ resource: URL, clientID: String? = nil, authorizationServer: String? = nil, registrations: (any RegistrationStore)? = nil,
        clientName: String = "swift-oidc", callbackPort: Int? = nil, transport: any HTTPTransport = NIOHTTPTransport.shared,
        requestOptions: HTTPRequestOptions = HTTPRequestOptions(), logger: Logger? = nil, configuration: Configuration = Configuration()
    ) async throws(OIDCError) -> RelyingParty {
        let log = logger ?? OIDCLog.discovery
        let identifier = try ResourceIdentifier(resource)
        let found = try await ResourceMetadataLookup.find(identifier, transport: transport, options: requestOptions, logger: log)
        let issuer = try found.chooseServer(authorizationServer)
        let (metadata, isOpenID) = try await AuthorizationServerDiscovery.metadata(
            for: issuer, transport: transport, options: requestOptions, logger: log)
        try AuthorizationServerPolicy.checkEndpoints(of: metadata, issuer: issuer)
        guard metadata.advertised.codeChallengeMethodsSupported?.contains("S256") == true else {
            throw OIDCError(
                .pkceNotSupported,
                "The authorization server \(issuer) does not list S256 in code_challenge_methods_supported; a login without PKCE is refused (RFC 7636, MCP authorization).",
                context: ["issuer": issuer, "rule": "code_challenge_methods_supported S256"])
        }
        // A resource that takes only DPoP-bound tokens gets them without being asked.
        let (configuration, dpopTurnedOn) = ResourceDPoP.configuration(
            configuration, document: found.document, serverAlgorithms: metadata.advertised.dpopSigningAlgValuesSupported)
        if dpopTurnedOn {
            log.notice(
                "the resource takes only DPoP-bound tokens (dpop_bound_access_tokens_required): DPoP on, a new key for each login",
                metadata: ["resource": .string(identifier.value)])
        }
        let client = try await ResourceClient.choose(
            clientID: clientID, issuer: issuer, metadata: metadata, registrations: registrations ?? InMemoryRegistrationStore(),
            clientName: clientName, callbackPort: callbackPort, transport: transport, options: requestOptions, logger: log)
        let discovered = DiscoveredResource(
            identifier: identifier, metadataURL: found.url, authorizationServers: found.document.authorizationServers,
            scopesSupported: found.document.scopesSupported.isEmpty ? nil : found.document.scopesSupported, challenge: found.challenge,
            dpopBoundAccessTokensRequired: found.document.dpopBoundAccessTokensRequired, identity: isOpenID ? .openID : .oauth,
            registration: client.registration, clientSource: client.source, callbackPort: client.registration?.callbackPort ?? callbackPort,
            clientName: clientName)
        var provider = try metadata.configuration(confidential: client.registration?.clientSecret != nil, defaultScopes: discovered.defaultScopes)
        if client.registration?.clientSecret == nil { provider.clientAuthentication = .none }
        var tokenClient = TokenClient(
            provider: provider, clientID: client.id, authentication: ClientAuthentication(secret: client.registration?.clientSecret, for: provider),
            transport: transport, requestOptions: requestOptions, logger: logger)
        tokenClient.resource = identifier.value
        let keys = provider.jwksURI.map { JWKSCache(transport: transport, jwksURI: $0, logger: logger) }
        var relyingParty = RelyingParty(tokenClient: tokenClient, keys: keys, logger: logger, configuration: configuration)
        relyingParty.protectedResource = discovered
        log.debug(
            "resource discovered",
            metadata: [
                "resource": .string(identifier.value), "issuer": .issuer(issuer), "client": .string(client.source.rawValue),
                "openid": .bool(isOpenID),
            ])
        return relyingParty
    }

    /// The issuer ``forResource(_:clientID:authorizationServer:registrations:clientName:callbackPort:transport:requestOptions:logger:configuration:)``
    /// would use for `resource`: its steps 1 to 3 alone (the resource's metadata, its checks, the
    /// choice of server), for a caller that must know the issuer before registering, such as
    /// `oidc login --new-registration`, which keeps the port of the registration it replaces.
    package static func authorizationServer(
        forResource resource: URL, requested: String?, transport: any HTTPTransport, requestOptions: HTTPRequestOptions, logger: Logger?
    ) async throws(OIDCError) -> String {
        let identifier = try ResourceIdentifier(resource)
        let found = try await ResourceMetadataLookup.find(identifier, transport: transport, options: requestOptions, logger: logger ?? OIDCLog.discovery)
        return try found.chooseServer(requested)
    }

    /// After the server refused this relying party's registered client (`invalid_client` from
    /// its token endpoint, RFC 6749 §5.2): the registration is forgotten in `registrations` and
    /// made again, and the relying party for the new client returned. `nil` when `error` is
    /// another error or the client was not registered dynamically (then nothing is forgotten).
    public func replacingRefusedRegistration(
        after error: OIDCError, registrations: any RegistrationStore, transport: any HTTPTransport = NIOHTTPTransport.shared
    ) async throws(OIDCError) -> RelyingParty? {
        guard error.providerError?.error == "invalid_client", let resource = protectedResource, let registration = resource.registration,
            let url = URL(string: resource.identifier.value)
        else { return nil }
        logger?.notice("the server refused the registered client (invalid_client); registering again", metadata: ["issuer": .issuer(registration.issuer)])
        // Forgotten only while it is still the one kept: another login may have replaced it already.
        try await ResourceClient.locked(registrations, registration.issuer) { () async throws(OIDCError) in
            if try await registrations.registration(for: registration.issuer)?.clientID == registration.clientID {
                try await registrations.remove(for: registration.issuer)
            }
        }
        return try await Self.forResource(
            url, authorizationServer: registration.issuer, registrations: registrations, clientName: resource.clientName,
            callbackPort: registration.callbackPort, transport: transport, requestOptions: tokenClient.requestOptions, logger: logger,
            configuration: configuration)
    }
}
