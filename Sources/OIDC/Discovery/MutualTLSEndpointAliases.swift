public import Foundation

/// The endpoints a provider serves for clients that use mutual TLS (RFC 8705 §5,
/// `mtls_endpoint_aliases`): a provider may ask for client certificates only on separate URLs, so
/// that browsers are never asked for one at its ordinary endpoints.
///
/// A client that uses mutual TLS (a client certificate in its transport, or `tls_client_auth` /
/// `self_signed_tls_client_auth`) sends its token, revocation, introspection, device
/// authorization, pushed authorization and userinfo requests to the alias when there is one, the
/// ordinary endpoint otherwise (``ProviderConfiguration/usingMutualTLSEndpointAliases()``, which
/// ``TokenClient`` applies by itself). Authorization (the browser's) and the JWKS are never aliased.
public struct MutualTLSEndpointAliases: Sendable, Equatable {
    /// `token_endpoint`'s alias.
    public var tokenEndpoint: URL?
    /// `revocation_endpoint`'s alias.
    public var revocationEndpoint: URL?
    /// `introspection_endpoint`'s alias.
    public var introspectionEndpoint: URL?
    /// `device_authorization_endpoint`'s alias.
    public var deviceAuthorizationEndpoint: URL?
    /// `pushed_authorization_request_endpoint`'s alias.
    public var pushedAuthorizationRequestEndpoint: URL?
    /// `userinfo_endpoint`'s alias.
    public var userinfoEndpoint: URL?

    /// Aliases; none by default.
    public init(
        tokenEndpoint: URL? = nil, revocationEndpoint: URL? = nil, introspectionEndpoint: URL? = nil,
        deviceAuthorizationEndpoint: URL? = nil, pushedAuthorizationRequestEndpoint: URL? = nil, userinfoEndpoint: URL? = nil
    ) {
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.introspectionEndpoint = introspectionEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.pushedAuthorizationRequestEndpoint = pushedAuthorizationRequestEndpoint
        self.userinfoEndpoint = userinfoEndpoint
    }

    /// Whether no endpoint has an alias.
    package var isEmpty: Bool { self == MutualTLSEndpointAliases() }

    /// The aliases of a metadata document's `mtls_endpoint_aliases` object; members this library
    /// does not use are ignored. Each URL is held to the ``EndpointURLPolicy`` of every endpoint
    /// (https, or plain http on a loopback host).
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` when the member is not an object or an alias is
    ///   not a string URL; ``OIDCError/Code/insecureEndpoint`` for a plain-http alias off loopback.
    init(metadata value: JSONValue) throws(OIDCError) {
        guard case .object(let object) = value else {
            throw OIDCError(.malformedResponse, "The provider's metadata member 'mtls_endpoint_aliases' must be an object.")
        }
        let members = JSONObjectReader(object, document: "The provider's mtls_endpoint_aliases")
        self.init()
        for endpoint in ProviderEndpoint.allCases {
            guard let alias = endpoint.alias else { continue }
            self[keyPath: alias] = try members.endpoint(endpoint.member, role: "mtls_endpoint_aliases." + endpoint.member)
        }
    }
}

extension ProviderConfiguration {
    /// This configuration with each endpoint that has an alias in ``mutualTLSEndpointAliases``
    /// replaced by it (RFC 8705 §5): what a client that uses mutual TLS calls. Calling it again
    /// changes nothing. ``TokenClient`` does it by itself when its transport presents a client
    /// certificate or its client authentication is `tls_client_auth` or `self_signed_tls_client_auth`.
    public func usingMutualTLSEndpointAliases() -> ProviderConfiguration {
        var aliased = self
        for endpoint in ProviderEndpoint.allCases {
            guard let alias = endpoint.alias, let url = mutualTLSEndpointAliases[keyPath: alias] else { continue }
            aliased[keyPath: endpoint.configuration] = url
        }
        return aliased
    }
}
