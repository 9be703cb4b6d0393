public import Foundation

/// A protected resource's metadata (RFC 9728 §2), and where it is served (§3.1): written by a
/// resource server (``json``; the `OIDCResourceServer` kit's `ResourceServer.metadata`) and read by
/// a client (``RelyingParty/forResource(_:clientID:authorizationServer:registrations:clientName:callbackPort:transport:requestOptions:logger:configuration:)``).
///
/// ```swift
/// let metadata = server.metadata
/// router.get(metadata.wellKnownPath) { _ in Response(json: metadata.json) }
/// ```
public struct ProtectedResourceMetadata: Sendable {
    /// `resource`: the resource's identifier.
    public var resource: URL
    /// `authorization_servers`: the issuers whose tokens the resource takes.
    public var authorizationServers: [String]
    /// `scopes_supported`, left out when empty.
    public var scopesSupported: [String]
    /// `bearer_methods_supported`: `header` only (tokens in a form body or the URL are refused).
    public var bearerMethodsSupported: [String] = ["header"]
    /// `dpop_signing_alg_values_supported`, left out when empty (DPoP off).
    public var dpopSigningAlgorithms: [JWSAlgorithm]
    /// `dpop_bound_access_tokens_required`, written only when `true`.
    public var dpopBoundAccessTokensRequired: Bool
    /// `tls_client_certificate_bound_access_tokens`, written only when `true`.
    public var certificateBoundAccessTokens = false
    /// `resource_name`, when set.
    public var resourceName: String?
    /// `resource_documentation`, when set.
    public var resourceDocumentation: URL?

    /// Metadata for `resource`.
    public init(
        resource: URL, authorizationServers: [String], scopesSupported: [String] = [], dpopSigningAlgorithms: [JWSAlgorithm] = [],
        dpopBoundAccessTokensRequired: Bool = false
    ) {
        self.resource = resource
        self.authorizationServers = authorizationServers
        self.scopesSupported = scopesSupported
        self.dpopSigningAlgorithms = dpopSigningAlgorithms
        self.dpopBoundAccessTokensRequired = dpopBoundAccessTokensRequired
    }

    /// Where the document is served (RFC 9728 §3.1): `/.well-known/oauth-protected-resource`
    /// inserted between the resource's host and its path, so `https://api.example/v1/orders` has
    /// it at `https://api.example/.well-known/oauth-protected-resource/v1/orders`.
    package var wellKnownURL: URL { Self.wellKnownURL(for: resource) ?? resource }

    /// The path part of the document's well-known URL (RFC 9728 §3.1), for a router.
    public var wellKnownPath: String { Self.wellKnownPath(for: resource) }

    /// The document as JSON (UTF-8), members in a fixed order.
    public var json: [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        var first = true
        func member(_ name: String, _ write: (inout [UInt8]) -> Void) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONString.append(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            write(&bytes)
        }
        func strings(_ values: [String]) -> (inout [UInt8]) -> Void {
            { bytes in
                bytes.append(UInt8(ascii: "["))
                for (position, value) in values.enumerated() {
                    if position > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONString.append(value, to: &bytes)
                }
                bytes.append(UInt8(ascii: "]"))
            }
        }
        member("resource") { JSONString.append(resource.absoluteString, to: &$0) }
        if !authorizationServers.isEmpty { member("authorization_servers", strings(authorizationServers)) }
        if !scopesSupported.isEmpty { member("scopes_supported", strings(scopesSupported)) }
        member("bearer_methods_supported", strings(bearerMethodsSupported))
        if !dpopSigningAlgorithms.isEmpty { member("dpop_signing_alg_values_supported", strings(dpopSigningAlgorithms.map(\.rawValue))) }
        if dpopBoundAccessTokensRequired { member("dpop_bound_access_tokens_required") { $0 += "true".utf8 } }
        if certificateBoundAccessTokens { member("tls_client_certificate_bound_access_tokens") { $0 += "true".utf8 } }
        if let name = resourceName { member("resource_name") { JSONString.append(name, to: &$0) } }
        if let documentation = resourceDocumentation { member("resource_documentation") { JSONString.append(documentation.absoluteString, to: &$0) } }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The document as JSON text.
    public var jsonText: String { String(decoding: json, as: UTF8.self) }

    package static let wellKnownSegment = "/.well-known/oauth-protected-resource"

    package static func wellKnownPath(for resource: URL) -> String {
        var path = resource.path(percentEncoded: true)
        if path == "/" { path = "" }
        return wellKnownSegment + path
    }

    package static func wellKnownURL(for resource: URL) -> URL? {
        guard var components = URLComponents(url: resource, resolvingAgainstBaseURL: false) else { return nil }
        components.percentEncodedPath = wellKnownPath(for: resource)
        components.query = nil
        components.fragment = nil
        return components.url
    }
}
