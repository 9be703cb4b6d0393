internal import Foundation
public import Logging

extension ProviderMetadata {
    /// The provider as a relying party uses it: `preset`'s quirks (client authentication, extra
    /// headers, issuer matching, default scopes) laid over this metadata
    /// (``ProviderConfiguration/merging(_:)``); without a preset, the metadata's own configuration,
    /// a confidential client authenticating as `token_endpoint_auth_methods_supported` allows, and
    /// logins asking for `openid` (plus `offline_access` when the provider offers it).
    package func configuration(preset: ProviderConfiguration?, confidential: Bool) throws(OIDCError) -> ProviderConfiguration {
        if let preset { return preset.merging(self) }
        return try configuration(confidential: confidential, defaultScopes: defaultLoginScopes)
    }
}

extension ProviderConfiguration {
    /// The provider that publishes its metadata at `issuer` (OpenID Connect Discovery, or RFC 8414),
    /// with `preset` laid over it (`ProviderMetadata.configuration(preset:confidential:)`): what
    /// ``RelyingParty/discover(issuer:clientID:clientSecret:preset:transport:requestOptions:logger:configuration:)``
    /// starts from, for a relying party built from its parts.
    ///
    /// - Parameters:
    ///   - issuer: the provider's issuer.
    ///   - preset: a configuration whose quirks win over the metadata; `nil` for none.
    ///   - confidential: whether the client has a secret (without a preset, the method is then
    ///     chosen from the provider's).
    ///   - transport: sends the discovery request.
    ///   - requestOptions: its timeout and size limit.
    ///   - logger: where it logs; `nil` logs nothing.
    /// - Throws: what ``ProviderDiscovery/metadata(for:)`` throws (`issuerMismatch`, transient
    ///   errors, …). Metadata without an authorization endpoint is accepted (a provider for client
    ///   credentials or the device flow only); a browser login then says what is missing.
    public static func discover(
        issuer: String, preset: ProviderConfiguration? = nil, confidential: Bool = false, transport: any HTTPTransport = NIOHTTPTransport.shared,
        requestOptions: HTTPRequestOptions = HTTPRequestOptions(), logger: Logger? = nil
    ) async throws(OIDCError) -> ProviderConfiguration {
        let metadata = try await ProviderDiscovery(transport: transport, requestOptions: requestOptions, logger: logger).metadata(for: issuer)
        return try metadata.configuration(preset: preset, confidential: confidential)
    }
}

extension ClientAuthentication {
    /// How a client with `secret` (or none) authenticates at `provider`: as its configuration's
    /// ``ProviderConfiguration/clientAuthentication`` says, except that a secret given for a
    /// provider configured with ``ClientAuthenticationMethod/none`` is sent with
    /// `client_secret_basic`, RFC 6749 §2.3.1's default, rather than ignored. The one place a
    /// relying party decides its method from a secret.
    package init(secret: Secret?, for provider: ProviderConfiguration) {
        let method = secret != nil && provider.clientAuthentication == .none ? .forSecret(supported: nil) : provider.clientAuthentication
        self.init(method: method, secret: secret)
    }
}
