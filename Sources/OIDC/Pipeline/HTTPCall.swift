internal import Foundation

/// Which pipeline a request goes through, and which call it is: what an ``HTTPStage`` is told
/// beside the request, so that it can tell a token request from a resource request without reading
/// the URL.
public enum HTTPCall: Sendable, Hashable {
    /// A call to the provider (``TokenClient``): a grant, a pushed authorization request, a
    /// revocation, an introspection, a device authorization or userinfo.
    case provider(ProviderCall)
    /// A request to a resource server, with the access token (``AuthenticatedSession/send(_:)``).
    case resource

    /// The name of the call in log lines: the grant type or the request's name (`revocation`,
    /// `pushed_authorization`, …), or `resource`.
    public var logName: String {
        switch self {
        case .provider(let call): call.logName
        case .resource: "resource"
        }
    }

    /// Whether the request carries the access token in its `Authorization` header (a resource
    /// request, userinfo): with DPoP, its proof then holds the token's hash (`ath`).
    package var carriesAccessToken: Bool {
        switch self {
        case .provider(let call): call.carriesAccessToken
        case .resource: true
        }
    }

    /// Whether the request carries a DPoP proof when the tokens are DPoP-bound.
    package var carriesProof: Bool {
        switch self {
        case .provider(let call): call.carriesProof
        case .resource: true
        }
    }
}

/// One call to a provider's endpoints: what it is decides what it carries (client
/// authentication, a DPoP proof, the access token) and how it is named in logs.
///
/// A value, not an exhaustive enum: each call is a static member (``grant(_:)``,
/// ``pushedAuthorization``, ``revocation``, …), and a new one (CIBA's backchannel authentication,
/// say) is one more member declared in its own file, which breaks no stage that compares calls.
/// Compare with `==` (`call == .revocation`), or read ``grantType``.
public struct ProviderCall: Sendable, Hashable, CustomStringConvertible {
    /// The name in log lines: the `grant_type` of a grant; `pushed_authorization`, `revocation`,
    /// `introspection`, `device_authorization` or `userinfo` otherwise.
    public let logName: String
    /// The grant of a token request; `nil` for the other calls.
    public let grantType: GrantType?
    /// Whether a DPoP proof goes with the call when the client binds its tokens with DPoP: token
    /// requests and pushed authorization requests (RFC 9449 §5, §10.1); userinfo, as any request
    /// with a DPoP-bound access token (§7); not revocation, introspection or device authorization,
    /// which RFC 9449 leaves alone.
    package let carriesProof: Bool
    /// Whether the call carries the access token (`Authorization: Bearer` or `DPoP`) rather than the
    /// client's authentication: userinfo.
    package let carriesAccessToken: Bool
    /// The endpoint in messages: `token endpoint`, `revocation endpoint`, ….
    let endpointName: String

    /// A call named `logName` at the endpoint named `endpointName`, for a new kind of call.
    package init(logName: String, endpointName: String, grantType: GrantType? = nil, carriesProof: Bool, carriesAccessToken: Bool = false) {
        self.logName = logName
        self.endpointName = endpointName
        self.grantType = grantType
        self.carriesProof = carriesProof
        self.carriesAccessToken = carriesAccessToken
    }

    /// A request at the token endpoint with this grant: a code exchange, a refresh, client
    /// credentials, a device poll, a token exchange or an extension grant.
    public static func grant(_ grant: GrantType) -> ProviderCall {
        ProviderCall(logName: grant.rawValue, endpointName: "token endpoint", grantType: grant, carriesProof: true)
    }
    /// A pushed authorization request (RFC 9126).
    public static let pushedAuthorization = ProviderCall(
        logName: "pushed_authorization", endpointName: "pushed authorization request endpoint", carriesProof: true)
    /// A revocation (RFC 7009).
    public static let revocation = ProviderCall(logName: "revocation", endpointName: "revocation endpoint", carriesProof: false)
    /// An introspection (RFC 7662).
    public static let introspection = ProviderCall(logName: "introspection", endpointName: "introspection endpoint", carriesProof: false)
    /// A device authorization request (RFC 8628 §3.1).
    public static let deviceAuthorization = ProviderCall(
        logName: "device_authorization", endpointName: "device authorization endpoint", carriesProof: false)
    /// A userinfo request (OIDC Core §5.3), with the access token.
    public static let userinfo = ProviderCall(
        logName: "userinfo", endpointName: "userinfo endpoint", carriesProof: true, carriesAccessToken: true)

    /// ``logName``.
    public var description: String { logName }
}

/// A `grant_type` (RFC 6749 §4): the registered ones as constants, any extension grant (§4.5) by
/// its URI.
public struct GrantType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The `grant_type` value.
    public let rawValue: String

    /// The grant type `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The grant type `value`, as a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// `authorization_code` (RFC 6749 §4.1.3).
    public static let authorizationCode = GrantType(rawValue: "authorization_code")
    /// `refresh_token` (RFC 6749 §6).
    public static let refreshToken = GrantType(rawValue: "refresh_token")
    /// `client_credentials` (RFC 6749 §4.4).
    public static let clientCredentials = GrantType(rawValue: "client_credentials")
    /// `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4).
    public static let deviceCode = GrantType(rawValue: "urn:ietf:params:oauth:grant-type:device_code")
    /// `urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693 §2.1).
    public static let tokenExchange = GrantType(rawValue: "urn:ietf:params:oauth:grant-type:token-exchange")

    /// The `grant_type` value.
    public var description: String { rawValue }
}
