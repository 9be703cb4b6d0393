extension ProviderMetadata {
    /// Parses and validates a metadata document.
    @available(*, deprecated, message: "use ProviderDiscovery.metadata(for:) or ProviderConfiguration.discover(issuer:preset:confidential:transport:requestOptions:logger:), which fetch, parse and check the document")
    public init(json: [UInt8], expectedIssuer: String) throws(OIDCError) { try self.init(document: json, expectedIssuer: expectedIssuer) }
}
