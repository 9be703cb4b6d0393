internal import Foundation

extension ProviderMetadata {
    /// What a metadata document advertises that the library acts on, read once when it is parsed:
    /// ``ProviderMetadata/configuration(confidential:defaultScopes:)`` and
    /// ``ProviderConfiguration/merging(_:)`` turn it into a ``ProviderConfiguration``.
    package struct Advertised: Sendable {
        /// `require_pushed_authorization_requests` (RFC 9126 §5): the provider takes authorization
        /// requests only through its pushed authorization request endpoint.
        package let requirePushedAuthorizationRequests: Bool
        /// `require_signed_request_object` (RFC 9101 §10.5): the provider takes authorization requests
        /// only as signed request objects.
        package let requireSignedRequestObject: Bool
        /// `request_object_signing_alg_values_supported` (OIDC Discovery, RFC 9101 §10.5), when advertised.
        package let requestObjectSigningAlgValuesSupported: [String]?
        /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1), when advertised.
        package let dpopSigningAlgValuesSupported: [String]?
        /// `response_modes_supported` (OIDC Discovery; `query.jwt`, `jwt`, … for JARM), when advertised.
        package let responseModesSupported: [String]?
        /// `authorization_signing_alg_values_supported` (JARM §3): the algorithms of its signed
        /// authorization responses, when advertised.
        package let authorizationSigningAlgValuesSupported: [String]?
        /// `response_types_supported`; a document without the member is refused.
        package let responseTypesSupported: [String]?
        /// `grant_types_supported`, when advertised.
        package let grantTypesSupported: [String]?
        /// `code_challenge_methods_supported` (RFC 7636 methods such as `S256`), when advertised.
        package let codeChallengeMethodsSupported: [String]?
        /// `token_endpoint_auth_methods_supported`, when advertised: ``ProviderMetadata/configuration(confidential:defaultScopes:)``
        /// chooses the client authentication method from it.
        package let tokenEndpointAuthMethodsSupported: [String]?
        /// `id_token_signing_alg_values_supported`, when advertised.
        package let idTokenSigningAlgValuesSupported: [String]?
        /// RFC 9207: the provider promises `iss` in every authorization response.
        package let authorizationResponseIssParameterSupported: Bool
        /// `mtls_endpoint_aliases` (RFC 8705 §5): the endpoints for clients that use mutual TLS, each
        /// held to the same policy as the ordinary endpoints; empty when not advertised.
        package let mutualTLSEndpointAliases: MutualTLSEndpointAliases
        /// `tls_client_certificate_bound_access_tokens` (RFC 8705 §3.3): the provider binds access
        /// tokens issued over mutual TLS to the client's certificate.
        package let tlsClientCertificateBoundAccessTokens: Bool

        /// The members of a document, as `members` reads them.
        init(_ members: JSONObjectReader) throws(OIDCError) {
            requirePushedAuthorizationRequests = try members.bool("require_pushed_authorization_requests") ?? false
            requireSignedRequestObject = try members.bool("require_signed_request_object") ?? false
            requestObjectSigningAlgValuesSupported = try members.strings("request_object_signing_alg_values_supported")
            dpopSigningAlgValuesSupported = try members.strings("dpop_signing_alg_values_supported")
            responseModesSupported = try members.strings("response_modes_supported")
            authorizationSigningAlgValuesSupported = try members.strings("authorization_signing_alg_values_supported")
            responseTypesSupported = try members.strings("response_types_supported")
            grantTypesSupported = try members.strings("grant_types_supported")
            codeChallengeMethodsSupported = try members.strings("code_challenge_methods_supported")
            tokenEndpointAuthMethodsSupported = try members.strings("token_endpoint_auth_methods_supported")
            idTokenSigningAlgValuesSupported = try members.strings("id_token_signing_alg_values_supported")
            authorizationResponseIssParameterSupported = try members.bool("authorization_response_iss_parameter_supported") ?? false
            tlsClientCertificateBoundAccessTokens = try members.bool("tls_client_certificate_bound_access_tokens") ?? false
            if let aliases = members["mtls_endpoint_aliases"] {
                mutualTLSEndpointAliases = try MutualTLSEndpointAliases(metadata: aliases)
            } else {
                mutualTLSEndpointAliases = MutualTLSEndpointAliases()
            }
        }
    }
}
