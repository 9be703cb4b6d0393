package import Foundation

/// The provider's endpoints, listed once: the metadata member that names each one (OIDC Discovery
/// §3, RFC 8414 §2), where ``ProviderConfiguration`` holds it, and where its mutual-TLS alias is
/// held (RFC 8705 §5) when it can have one.
///
/// Everything that goes over the endpoints one by one goes over this list: reading a metadata
/// document (``ProviderMetadata``), its `mtls_endpoint_aliases` (``MutualTLSEndpointAliases``),
/// laying a preset over discovered metadata (``ProviderConfiguration/merging(_:)``), applying the
/// aliases (``ProviderConfiguration/usingMutualTLSEndpointAliases()``), a stored login's provider,
/// and the test provider's discovery document. A new endpoint is one case here, one property on
/// ``ProviderConfiguration`` (and one on ``ProviderMetadata``, which reads it from this list).
package enum ProviderEndpoint: String, CaseIterable, Sendable {
    case authorization = "authorization_endpoint"
    case token = "token_endpoint"
    case jwks = "jwks_uri"
    case userinfo = "userinfo_endpoint"
    case revocation = "revocation_endpoint"
    case endSession = "end_session_endpoint"
    case deviceAuthorization = "device_authorization_endpoint"
    case introspection = "introspection_endpoint"
    case pushedAuthorization = "pushed_authorization_request_endpoint"
    case backchannelAuthentication = "backchannel_authentication_endpoint"

    /// The metadata member that names the endpoint: `token_endpoint`.
    package var member: String { rawValue }

    /// Where ``ProviderConfiguration`` holds the endpoint.
    package var configuration: WritableKeyPath<ProviderConfiguration, URL?> {
        switch self {
        case .authorization: \.authorizationEndpoint
        case .token: \.tokenEndpoint
        case .jwks: \.jwksURI
        case .userinfo: \.userinfoEndpoint
        case .revocation: \.revocationEndpoint
        case .endSession: \.endSessionEndpoint
        case .deviceAuthorization: \.deviceAuthorizationEndpoint
        case .introspection: \.introspectionEndpoint
        case .pushedAuthorization: \.pushedAuthorizationRequestEndpoint
        case .backchannelAuthentication: \.backchannelAuthenticationEndpoint
        }
    }

    /// Where ``MutualTLSEndpointAliases`` holds the endpoint's alias, under the same member name in
    /// `mtls_endpoint_aliases`; `nil` for the endpoints a client never calls with its certificate:
    /// the browser's (authorization, end session) and the key set.
    package var alias: WritableKeyPath<MutualTLSEndpointAliases, URL?>? {
        switch self {
        case .authorization, .jwks, .endSession, .backchannelAuthentication: nil
        case .token: \.tokenEndpoint
        case .userinfo: \.userinfoEndpoint
        case .revocation: \.revocationEndpoint
        case .deviceAuthorization: \.deviceAuthorizationEndpoint
        case .introspection: \.introspectionEndpoint
        case .pushedAuthorization: \.pushedAuthorizationRequestEndpoint
        }
    }

    /// The endpoints that can have a mutual-TLS alias (RFC 8705 §5).
    package static var aliased: [ProviderEndpoint] { allCases.filter { $0.alias != nil } }
}
