extension ProviderMetadata {
    /// Parses and validates a metadata document.
    @available(*, deprecated, message: "use ProviderDiscovery.metadata(for:) or ProviderConfiguration.discover(issuer:preset:confidential:transport:requestOptions:logger:), which fetch, parse and check the document")
    public init(json: [UInt8], expectedIssuer: String) throws(OIDCError) { try self.init(document: json, expectedIssuer: expectedIssuer) }

    // The document's members the library acts on: read typed in the provider's configuration, or in `raw`.
    /// `require_pushed_authorization_requests` (RFC 9126 §5): the provider takes authorization
    /// requests only through its pushed authorization request endpoint.
    @available(*, deprecated, message: "read configuration().requiresPushedAuthorizationRequests, or raw[\"require_pushed_authorization_requests\"]")
    public var requirePushedAuthorizationRequests: Bool { advertised.requirePushedAuthorizationRequests }
    /// `require_signed_request_object` (RFC 9101 §10.5): the provider takes authorization requests
    /// only as signed request objects.
    @available(*, deprecated, message: "read configuration().requiresSignedRequestObjects, or raw[\"require_signed_request_object\"]")
    public var requireSignedRequestObject: Bool { advertised.requireSignedRequestObject }
    /// `request_object_signing_alg_values_supported` (OIDC Discovery, RFC 9101 §10.5), when advertised.
    @available(*, deprecated, message: "read configuration().requestObjectSigningAlgorithms, or raw[\"request_object_signing_alg_values_supported\"]")
    public var requestObjectSigningAlgValuesSupported: [String]? { advertised.requestObjectSigningAlgValuesSupported }
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1), when advertised.
    @available(*, deprecated, message: "read configuration().dpopSigningAlgorithms, or raw[\"dpop_signing_alg_values_supported\"]")
    public var dpopSigningAlgValuesSupported: [String]? { advertised.dpopSigningAlgValuesSupported }
    /// `response_modes_supported` (OIDC Discovery; `query.jwt`, `jwt`, … for JARM), when advertised.
    @available(*, deprecated, message: "read configuration().responseModesSupported, or raw[\"response_modes_supported\"]")
    public var responseModesSupported: [String]? { advertised.responseModesSupported }
    /// `authorization_signing_alg_values_supported` (JARM §3): the algorithms of its signed
    /// authorization responses, when advertised.
    @available(*, deprecated, message: "read configuration().authorizationSigningAlgorithms, or raw[\"authorization_signing_alg_values_supported\"]")
    public var authorizationSigningAlgValuesSupported: [String]? { advertised.authorizationSigningAlgValuesSupported }
    /// `code_challenge_methods_supported` (RFC 7636 methods such as `S256`), when advertised.
    @available(*, deprecated, message: "read configuration().codeChallengeMethodsSupported, or raw[\"code_challenge_methods_supported\"]")
    public var codeChallengeMethodsSupported: [String]? { advertised.codeChallengeMethodsSupported }
    /// `id_token_signing_alg_values_supported`, when advertised.
    @available(*, deprecated, message: "read configuration().idTokenSigningAlgorithms, or raw[\"id_token_signing_alg_values_supported\"]")
    public var idTokenSigningAlgValuesSupported: [String]? { advertised.idTokenSigningAlgValuesSupported }
    /// RFC 9207: the provider promises `iss` in every authorization response.
    @available(*, deprecated, message: "read configuration().authorizationResponseIssParameterSupported, or raw[\"authorization_response_iss_parameter_supported\"]")
    public var authorizationResponseIssParameterSupported: Bool { advertised.authorizationResponseIssParameterSupported }
    /// `mtls_endpoint_aliases` (RFC 8705 §5): the endpoints for clients that use mutual TLS, each
    /// held to the same policy as the ordinary endpoints; empty when not advertised.
    @available(*, deprecated, message: "read configuration().mutualTLSEndpointAliases, or raw[\"mtls_endpoint_aliases\"]")
    public var mutualTLSEndpointAliases: MutualTLSEndpointAliases { advertised.mutualTLSEndpointAliases }
    /// `tls_client_certificate_bound_access_tokens` (RFC 8705 §3.3): the provider binds access
    /// tokens issued over mutual TLS to the client's certificate.
    @available(*, deprecated, message: "read configuration().tlsClientCertificateBoundAccessTokens, or raw[\"tls_client_certificate_bound_access_tokens\"]")
    public var tlsClientCertificateBoundAccessTokens: Bool { advertised.tlsClientCertificateBoundAccessTokens }
}
