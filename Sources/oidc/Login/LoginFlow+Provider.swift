import ArgumentParser
import Foundation
import OIDC

extension LoginFlow {
    /// The scopes asked for: the profile's, or the provider's defaults (`openid`, and
    /// `offline_access` when offered; a preset's own) when it names none.
    var scopes: [String]? { profile.scopes.isEmpty ? nil : profile.scopes }

    /// The profile's provider as a relying party, each part logging under its own label, the client
    /// authenticating as `--client-auth` says or as chosen from its credentials and the provider's methods.
    func relyingParty(transport: NIOHTTPTransport) async throws -> RelyingParty {
        // A JWT bearer login names its authorization server (--issuer); its --resource is the
        // RFC 8707 resource its tokens are asked for.
        if let resource = profile.resource, flow != .jwtBearer { return try await resourceRelyingParty(resource, transport: transport) }
        guard let clientID = profile.clientID, !clientID.isEmpty else { throw ValidationError("--client-id is required") }
        var (provider, supported) = try await resolveProvider(transport: transport)
        let method = try profile.clientAuthenticationMethod(hasSecret: clientSecret != nil, supported: supported, preset: provider.clientAuthentication)
        provider.clientAuthentication = method
        if let endpoint = profile.deviceAuthorizationEndpoint { provider.deviceAuthorizationEndpoint = URL(string: endpoint) }
        var client = TokenClient(
            provider: provider, clientID: clientID, authentication: try profile.clientAuthentication(method: method, secret: clientSecret),
            transport: transport, now: CLIClock.now, logger: CLILog.logger(.token)
        )
        if flow == .jwtBearer { client.resource = profile.resource }
        let keys = provider.jwksURI.map { JWKSCache(transport: transport, jwksURI: $0, logger: CLILog.logger(.jwks)) }
        var configuration = RelyingParty.Configuration()
        try profile.configure(&configuration, provider: provider)
        return RelyingParty(tokenClient: client, keys: keys, logger: CLILog.logger(.session), configuration: configuration)
    }

    /// The provider and the client authentication methods it lists (when discovered): the Schibsted
    /// preset as it is (`client_secret_basic` with a secret); Swan's preset over its discovered
    /// metadata; any other issuer's metadata.
    private func resolveProvider(transport: NIOHTTPTransport) async throws -> (ProviderConfiguration, supported: [String]?) {
        let discovery = ProviderDiscovery(
            transport: transport, requestOptions: HTTPRequestOptions(timeout: .seconds(try NetworkTimeout.environment() ?? NetworkTimeout.loginDefault)),
            logger: CLILog.logger(.discovery)
        )
        switch profile.provider {
        case .schibsted:
            guard let name = profile.environment, let environment = Schibsted.Environment(name: name) else {
                throw ValidationError("--environment: give pre, sweden, norway, finland, denmark or an https base URL for --provider schibsted")
            }
            var configuration = ProviderConfiguration.schibsted(environment)
            configuration.clientAuthentication = .clientSecretBasic
            return (configuration, nil)
        case .swan:
            let swan = ProviderConfiguration.swan
            let metadata = try await discovery.metadata(for: swan.issuer)
            return (swan.merging(metadata), metadata.advertised.tokenEndpointAuthMethodsSupported)
        case .generic:
            guard let issuer = profile.issuer else { throw ValidationError("--issuer is required (or --provider schibsted|swan)") }
            if flow == .jwtBearer {
                // No ID token comes from this grant: a plain OAuth server (RFC 8414, no keys) will do.
                let found = try await AuthorizationServerDiscovery.metadata(
                    for: issuer, transport: transport,
                    options: HTTPRequestOptions(timeout: .seconds(try NetworkTimeout.environment() ?? NetworkTimeout.loginDefault)),
                    logger: CLILog.logger(.discovery))
                return (try found.metadata.configuration(defaultScopes: []), found.metadata.advertised.tokenEndpointAuthMethodsSupported)
            }
            let metadata = try await discovery.metadata(for: issuer)
            return (try metadata.configuration(defaultScopes: metadata.defaultLoginScopes), metadata.advertised.tokenEndpointAuthMethodsSupported)
        }
    }
}
