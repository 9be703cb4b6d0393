internal import Foundation
internal import OIDC

/// What every handler needs: the issuer, the configuration and the state.
struct ProviderContext: Sendable {
    let issuer: String
    let configuration: TestProvider.Configuration
    let state: ProviderState

    func client(_ id: String) -> TestProvider.Client? {
        configuration.clients.first { $0.id == id } ?? metadataDocumentClient(id)
    }

    var clients: [TestProvider.Client] { configuration.clients }
}

/// The endpoint paths below the issuer, and the URLs built from them.
enum ProviderPaths {
    static let discovery = "/.well-known/openid-configuration"
    static let oauthMetadata = "/.well-known/oauth-authorization-server"
    static let jwks = "/jwks"
    static let authorize = "/authorize"
    static let authorizeConfirm = "/authorize/confirm"
    static let token = "/token"
    static let userinfo = "/userinfo"
    static let revocation = "/revoke"
    static let introspection = "/introspect"
    static let deviceAuthorization = "/device_authorization"
    static let deviceVerification = "/device"
    static let endSession = "/logout"
    static let pushedAuthorization = "/par"
    static let backchannelAuthentication = "/bc-authorize"
    static let protectedResource = "/api/me"

    /// The path of each endpoint of the library's list (``ProviderEndpoint``), below the issuer.
    static func path(of endpoint: ProviderEndpoint) -> String {
        switch endpoint {
        case .authorization: authorize
        case .token: token
        case .jwks: jwks
        case .userinfo: userinfo
        case .revocation: revocation
        case .endSession: endSession
        case .deviceAuthorization: deviceAuthorization
        case .introspection: introspection
        case .pushedAuthorization: pushedAuthorization
        case .backchannelAuthentication: backchannelAuthentication
        }
    }

    /// The endpoint an mTLS alias path addresses (`{issuerPath}{prefix}/token`), given the issuer's
    /// path and the aliases' prefix; `nil` for anything else.
    static func aliasedEndpoint(for path: String, issuerPath: String, prefix: String?) -> TestProvider.Endpoint? {
        guard let prefix, path.hasPrefix(issuerPath + prefix + "/") else { return nil }
        let rest = String(path.dropFirst(issuerPath.count + prefix.count))
        guard ProviderEndpoint.aliased.contains(where: { ProviderPaths.path(of: $0) == rest }) else { return nil }
        return endpoint(for: issuerPath + rest, issuerPath: issuerPath)
    }

    /// The endpoint a request path addresses, given the issuer's path; `nil` for anything else.
    /// RFC 8414 metadata is served both at `/.well-known/oauth-authorization-server{issuerPath}` and
    /// below the issuer.
    static func endpoint(for path: String, issuerPath: String) -> TestProvider.Endpoint? {
        if path == oauthMetadata + issuerPath { return .discovery }
        if let resource = ResourcePaths.endpoint(for: path) { return resource }
        if path == issuerPath + RegistrationPaths.register || path.hasPrefix(issuerPath + RegistrationPaths.register + "/") { return .registration }
        guard path.hasPrefix(issuerPath) else { return nil }
        switch path.dropFirst(issuerPath.count) {
        case discovery[...], oauthMetadata[...]: return .discovery
        case jwks[...]: return .jwks
        case authorize[...], authorizeConfirm[...]: return .authorize
        case token[...]: return .token
        case userinfo[...]: return .userinfo
        case revocation[...]: return .revocation
        case introspection[...]: return .introspection
        case deviceAuthorization[...]: return .deviceAuthorization
        case deviceVerification[...]: return .deviceVerification
        case endSession[...]: return .endSession
        case pushedAuthorization[...]: return .pushedAuthorization
        case backchannelAuthentication[...]: return .backchannelAuthentication
        case protectedResource[...]: return .protectedResource
        default: return nil
        }
    }
}

extension TestProvider.Configuration {
    /// Whether the provider answers at `endpoint`: at every one but the pushed authorization
    /// request endpoint, which answers only when offered.
    func serves(_ endpoint: ProviderEndpoint) -> Bool {
        endpoint != .pushedAuthorization || pushedAuthorizationRequests != .notOffered
    }

    /// Whether the discovery document names `endpoint`: every endpoint served, but the device
    /// authorization endpoint only when ``TestProvider/DeviceFlow/advertised``.
    func advertises(_ endpoint: ProviderEndpoint) -> Bool {
        serves(endpoint) && (endpoint != .deviceAuthorization || deviceFlow.advertised)
    }
}
