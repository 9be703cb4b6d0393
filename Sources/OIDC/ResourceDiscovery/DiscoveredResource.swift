public import Foundation

/// What ``RelyingParty/forResource(_:clientID:authorizationServer:registrations:clientName:callbackPort:transport:requestOptions:logger:configuration:)``
/// found about a protected resource: its identifier (sent as `resource` on every authorization
/// and token request), its metadata, the authorization server chosen, and the client used there.
public struct DiscoveredResource: Sendable {
    /// The resource's identifier, as sent in `resource` (RFC 8707).
    public let identifier: ResourceIdentifier
    /// Where its metadata document was read (RFC 9728).
    public let metadataURL: URL
    /// `authorization_servers` of the document, in its order.
    public let authorizationServers: [String]
    /// `scopes_supported` of the document, when it lists them.
    public let scopesSupported: [String]?
    /// The 401 challenge of the unauthenticated request, when the resource sent one.
    public let challenge: ResourceChallenge?
    /// `dpop_bound_access_tokens_required` of the document (RFC 9449 §5.2 of RFC 9728).
    public let dpopBoundAccessTokensRequired: Bool
    /// What logins at the authorization server prove: plain OAuth at a plain OAuth 2.0 server,
    /// OpenID otherwise.
    package let identity: LoginIdentity
    /// Whether the authorization server is a plain OAuth 2.0 server (no `jwks_uri` or no
    /// ID-token algorithms in its metadata): logins ask for exactly the scopes given, never add
    /// `openid` or `offline_access`, and are kept without a subject.
    public var isPlainOAuth: Bool { identity == .oauth }
    /// The dynamic registration the client id comes from; `nil` for a given client id or a Client
    /// ID Metadata Document URL.
    public let registration: ClientRegistration?
    /// How the client id was had.
    public let clientSource: ClientSource
    /// The loopback port a browser login binds: the registration's, or the one asked for.
    public let callbackPort: Int?
    /// The name the client registers under, for a registration made again.
    let clientName: String

    /// How the client id of a resource's login was had.
    public enum ClientSource: String, Sendable {
        /// Given by the caller (pre-registered).
        case given
        /// An https URL of a Client ID Metadata Document, which the server advertises taking.
        case metadataDocument
        /// Dynamic registration (RFC 7591), made now.
        case registered
        /// A dynamic registration made earlier, from the ``RegistrationStore``.
        case storedRegistration
    }

    /// The scopes a login for this resource asks for when none are given: the 401 challenge's
    /// `scope`, else the document's `scopes_supported`, else none (the MCP spec's order).
    package var defaultScopes: [String] { challenge?.scopes ?? scopesSupported ?? [] }
}
