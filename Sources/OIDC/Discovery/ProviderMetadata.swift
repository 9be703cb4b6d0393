public import Foundation

/// A provider's metadata document (OpenID Connect Discovery 1.0 §3, RFC 8414 §2), validated.
///
/// The document's `issuer` equals the expected issuer exactly (Discovery §4.3, RFC 8414 §3.3: a
/// document for another issuer is an impersonation attempt), and every endpoint is https, or plain
/// http on a loopback host.
public struct ProviderMetadata: Sendable {
    /// `issuer`: equal to the expected issuer, character for character (checked when parsing).
    public let issuer: String
    /// `authorization_endpoint`, where the browser is sent to log in.
    public var authorizationEndpoint: URL? { endpoints[.authorization] }
    /// `token_endpoint`, for code exchange and refresh.
    public var tokenEndpoint: URL? { endpoints[.token] }
    /// `jwks_uri`, where the provider publishes its signing keys; a document without the member is
    /// refused.
    public var jwksURI: URL? { endpoints[.jwks] }
    /// `userinfo_endpoint` (OIDC Core §5.3), when advertised.
    public var userinfoEndpoint: URL? { endpoints[.userinfo] }
    /// `revocation_endpoint` (RFC 7009), when advertised.
    public var revocationEndpoint: URL? { endpoints[.revocation] }
    /// `end_session_endpoint` (OpenID Connect RP-Initiated Logout), when advertised.
    public var endSessionEndpoint: URL? { endpoints[.endSession] }
    /// `registration_endpoint` (dynamic client registration), when advertised; the library does not
    /// use it.
    public let registrationEndpoint: URL?
    /// `device_authorization_endpoint` (RFC 8628 §4), when advertised.
    public var deviceAuthorizationEndpoint: URL? { endpoints[.deviceAuthorization] }
    /// `introspection_endpoint` (RFC 7662, RFC 8414 §2), when advertised.
    public var introspectionEndpoint: URL? { endpoints[.introspection] }
    /// `pushed_authorization_request_endpoint` (RFC 9126 §5), when advertised.
    public var pushedAuthorizationRequestEndpoint: URL? { endpoints[.pushedAuthorization] }
    /// `scopes_supported`, when advertised.
    public let scopesSupported: [String]?
    /// `response_types_supported`; a document without the member is refused.
    public var responseTypesSupported: [String]? { advertised.responseTypesSupported }
    /// `grant_types_supported`, when advertised.
    public var grantTypesSupported: [String]? { advertised.grantTypesSupported }
    /// `token_endpoint_auth_methods_supported`, when advertised: ``configuration(confidential:defaultScopes:)``
    /// chooses the client authentication method from it.
    public var tokenEndpointAuthMethodsSupported: [String]? { advertised.tokenEndpointAuthMethodsSupported }
    /// What else the document advertises that the library acts on: the PAR and request-object
    /// requirements, algorithms, response modes, PKCE and client authentication methods, RFC 9207,
    /// mutual TLS. ``configuration(confidential:defaultScopes:)`` turns them into the provider's
    /// ``ProviderConfiguration``, where a caller reads them typed; ``raw`` holds the document.
    package let advertised: Advertised
    /// The endpoints the document names, read over ``ProviderEndpoint``'s list.
    let endpoints: [ProviderEndpoint: URL]
    /// The whole document, as parsed.
    public let raw: [String: JSONValue]
    /// The document as received (UTF-8 JSON).
    public let rawJSON: String

    /// Parses and validates a metadata document.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a document that is not a JSON object or
    ///   has members of the wrong type; ``OIDCError/Code/issuerMismatch`` when its `issuer` is not
    ///   `expectedIssuer`; ``OIDCError/Code/insecureEndpoint`` for a plain-http endpoint off loopback.
    package init(document json: [UInt8], expectedIssuer: String) throws(OIDCError) {
        try self.init(json: json, expectedIssuer: expectedIssuer, requiresKeys: true)
    }

    /// Parses and validates a metadata document; without `requiresKeys`, one without `jwks_uri`
    /// is taken (RFC 8414 §2 makes it optional: a plain OAuth 2.0 server that issues no ID token).
    package init(json: [UInt8], expectedIssuer: String, requiresKeys: Bool) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.malformedResponse, "The provider's metadata is not a valid JSON object (\(error)).")
        }
        let members = JSONObjectReader(object, document: "The provider's metadata")
        guard let issuer = try members.string("issuer") else {
            throw OIDCError(.malformedResponse, "The provider's metadata has no 'issuer'.")
        }
        guard issuer == expectedIssuer else {
            throw OIDCError(
                .issuerMismatch,
                "The metadata document names another issuer than the one asked for; it must match exactly (OpenID Connect Discovery §4.3).",
                context: ["expected": expectedIssuer, "found": UntrustedText.sanitized(issuer)]
            )
        }
        // OIDC Discovery §3 REQUIRED (jwks_uri and response_types_supported; RFC 8414 also
        // requires the latter). Without keys no ID token can be verified.
        // A member whose value is null is as absent as a missing one.
        guard members["response_types_supported"] != nil else {
            throw OIDCError(.malformedResponse, "The provider's metadata lacks the required 'response_types_supported'.")
        }
        guard members["jwks_uri"] != nil || !requiresKeys else {
            throw OIDCError(.malformedResponse, "The provider's metadata lacks 'jwks_uri'; ID tokens could not be verified.")
        }
        self.issuer = issuer
        var endpoints: [ProviderEndpoint: URL] = [:]
        for endpoint in ProviderEndpoint.allCases {
            endpoints[endpoint] = try members.endpoint(endpoint.member)
        }
        self.endpoints = endpoints
        registrationEndpoint = try members.endpoint("registration_endpoint")
        scopesSupported = try members.strings("scopes_supported")
        advertised = try Advertised(members)
        raw = object
        rawJSON = String(decoding: json, as: UTF8.self)
    }

    /// The provider as the rest of the library uses it. The client authentication method is the
    /// first of `client_secret_basic`, `client_secret_post`, `client_secret_jwt` the provider
    /// supports (`client_secret_basic` when it lists none) when `confidential`, else `none`.
    ///
    /// A provider without an `authorization_endpoint` (RFC 8414 allows it for one that runs no
    /// browser login) gets none: a browser login then fails when its request is built.
    ///
    /// - Throws: nothing today; kept throwing for callers written against earlier versions.
    public func configuration(confidential: Bool = false, defaultScopes: [String] = ["openid"]) throws(OIDCError) -> ProviderConfiguration {
        let method = confidential ? ClientAuthenticationMethod.forSecret(supported: advertised.tokenEndpointAuthMethodsSupported) : .none
        var configuration = ProviderConfiguration(
            issuer: issuer, authorizationEndpoint: nil, defaultScopes: defaultScopes, clientAuthentication: method
        )
        for endpoint in ProviderEndpoint.allCases {
            configuration[keyPath: endpoint.configuration] = endpoints[endpoint]
        }
        configuration.requiresPushedAuthorizationRequests = advertised.requirePushedAuthorizationRequests
        configuration.requiresSignedRequestObjects = advertised.requireSignedRequestObject
        configuration.requestObjectSigningAlgorithms = advertised.requestObjectSigningAlgValuesSupported ?? []
        configuration.dpopSigningAlgorithms = advertised.dpopSigningAlgValuesSupported ?? []
        configuration.responseModesSupported = advertised.responseModesSupported
        configuration.authorizationSigningAlgorithms = advertised.authorizationSigningAlgValuesSupported ?? []
        configuration.codeChallengeMethodsSupported = advertised.codeChallengeMethodsSupported ?? []
        configuration.idTokenSigningAlgorithms = advertised.idTokenSigningAlgValuesSupported ?? []
        configuration.authorizationResponseIssParameterSupported = advertised.authorizationResponseIssParameterSupported
        configuration.mutualTLSEndpointAliases = advertised.mutualTLSEndpointAliases
        configuration.tlsClientCertificateBoundAccessTokens = advertised.tlsClientCertificateBoundAccessTokens
        return configuration
    }
}
