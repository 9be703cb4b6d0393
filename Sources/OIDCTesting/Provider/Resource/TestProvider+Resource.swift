internal import Foundation

extension TestProvider {
    /// `{origin}/resource`: the protected resource's identifier and URL (``ProtectedResource``).
    /// 401 without a token, its challenge naming ``resourceMetadataURL``.
    public var resourceURL: String { ResourcePaths(origin: origin).resource }

    /// `{origin}/resource/admin`: the resource's step-up route, 403 `insufficient_scope` unless the
    /// token has ``ProtectedResource/stepUpScope``.
    public var stepUpResourceURL: String { origin + ResourcePaths.stepUp }

    /// Where the resource's metadata document is served (``ProtectedResource/metadataLocation``):
    /// `{origin}/.well-known/oauth-protected-resource/resource` by default.
    public var resourceMetadataURL: String { ResourcePaths(origin: origin).metadataURL(configuration.protectedResource.metadataLocation) }

    /// `{origin}/.well-known/oauth-authorization-server{issuerPath}`: the RFC 8414 metadata.
    public var authorizationServerMetadataURL: String { origin + ProviderPaths.oauthMetadata + configuration.issuerPath }

    /// `{issuer}/register` (RFC 7591), served with ``Configuration/registration``.
    public var registrationEndpoint: String { issuer + RegistrationPaths.register }

    /// How many clients `/register` has registered, forgotten ones included.
    public func registrationCount() async -> Int { await state.registrations.count }

    /// How many times a client read its registration (`GET` at its `registration_client_uri`, RFC 7592 §2.1).
    public func registrationReadCount() async -> Int { await state.registrations.reads }

    /// The ids of the clients registered and not forgotten.
    public func registeredClientIDs() async -> [String] { await state.registeredClients.map(\.id).sorted() }

    /// The redirect URIs `clientID` registered, if it is a registered client.
    public func registeredRedirectURIs(of clientID: String) async -> [String]? {
        await state.registeredClients.first { $0.id == clientID }?.redirectURIs
    }

    /// Forgets every registered client, as a provider that expired or deleted them: their ids are
    /// answered `invalid_client` from now on.
    public func forgetRegistrations() async { await state.forgetRegistrations() }

    /// `scheme://host:port`, the issuer without its path.
    var origin: String { String(issuer.dropLast(configuration.issuerPath.count)) }
}

extension ProviderContext {
    /// The client an https `client_id` names at a provider that takes Client ID Metadata Documents:
    /// a public client whose redirect URI is `http://127.0.0.1/callback` on any port (the provider
    /// does not fetch the document).
    func metadataDocumentClient(_ id: String) -> TestProvider.Client? {
        guard configuration.registration?.clientIDMetadataDocuments == true, id.hasPrefix("https://"), URL(string: id)?.host != nil else { return nil }
        return TestProvider.Client(id: id, redirectURIs: ["http://127.0.0.1/callback"])
    }
}
