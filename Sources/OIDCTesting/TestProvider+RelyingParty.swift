public import Foundation
public import Logging
public import OIDC

extension TestProvider {
    /// The provider as the library configures it, without discovery: its issuer and endpoints,
    /// public-client authentication (`ClientAuthenticationMethod.none`), the default scopes
    /// `openid offline_access`, and its RFC 9207 promise.
    public var providerConfiguration: ProviderConfiguration {
        var provider = ProviderConfiguration(issuer: issuer, authorizationEndpoint: nil, defaultScopes: ["openid", "offline_access"])
        for endpoint in ProviderEndpoint.allCases where configuration.serves(endpoint) {
            provider[keyPath: endpoint.configuration] = Self.url(issuer + ProviderPaths.path(of: endpoint))
        }
        provider.codeChallengeMethodsSupported = ["S256"]
        provider.authorizationResponseIssParameterSupported = configuration.issuerParameterSupported
        return provider
    }

    /// `{issuer}/api/me`, the protected resource: 200 with a valid access token, 401 otherwise.
    public var protectedResource: URL { Self.url(protectedResourceURL) }

    /// A relying party of this provider for `client`, made the way an application makes one: by
    /// discovery, with the client's secret and its registered authentication method (or
    /// `authentication`, which a `private_key_jwt` client needs: the provider knows only its public
    /// key), and the provider's keys wired for ID-token verification.
    ///
    /// - Parameters:
    ///   - client: a client registered with this provider; ``Client/default`` (public) unless given.
    ///   - authentication: how the client authenticates; from its registration and secret when `nil`.
    ///   - transport: sends the requests; the shared `NIOHTTPTransport` by default.
    ///   - logger: where the relying party's parts log; `nil` logs nothing.
    ///   - configuration: the relying party's settings (DPoP, the front channel, a profile, your
    ///     pipeline stages); the defaults when not given.
    /// - Throws: what `RelyingParty.discover(issuer:clientID:authentication:preset:transport:requestOptions:logger:configuration:)` throws.
    public func relyingParty(
        client: Client = .default, authentication: OIDC.ClientAuthentication? = nil, transport: any HTTPTransport = NIOHTTPTransport.shared,
        logger: Logger? = nil, configuration: RelyingParty.Configuration = RelyingParty.Configuration()
    ) async throws(OIDCError) -> RelyingParty {
        let method = ClientAuthenticationMethod(rawValue: client.authentication.rawValue) ?? .none
        return try await RelyingParty.discover(
            issuer: issuer, clientID: client.id, authentication: authentication ?? OIDC.ClientAuthentication(method: method, secret: client.secret),
            preset: providerConfiguration, transport: transport, logger: logger, configuration: configuration
        )
    }

    /// An endpoint's URL; the provider made the text itself, from its bound address.
    private static func url(_ text: String) -> URL {
        guard let url = URL(string: text) else { preconditionFailure("The test provider made an invalid URL: \(text)") }
        return url
    }
}
