internal import Foundation

/// What a resource may name as its authorization server, and what that server's metadata may name
/// as endpoints, before any request goes there (security review 5, L1 and L3).
///
/// A resource is less trusted than a provider the user chose: the user typed only the resource's
/// URL, and everything else comes from the resource's document.
enum AuthorizationServerPolicy {
    /// The first scalar of `text` outside printable ASCII without the space (U+0021–U+007E), if any.
    static func firstNonPrintable(_ text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { $0.value < 0x21 || $0.value > 0x7E }
    }

    /// `U+001B`, for messages.
    static func codePoint(_ scalar: Unicode.Scalar) -> String { "U+" + String(format: "%04X", scalar.value) }

    /// An issuer that `identifier`'s document names, checked before any request goes to it:
    ///
    /// - printable ASCII only: an issuer is a URL (RFC 8414 §2, RFC 3986), stored with the login
    ///   and printed by every later `oidc status`; a control character there would drive the
    ///   terminal (escape sequences);
    /// - plain http only when the resource itself is plain http at the same (loopback) host, the
    ///   rule of a 401's `resource_metadata` (``ResourceMetadataLookup/checkedMetadataURL(_:for:)``):
    ///   another local port is another program, and a remote resource must not make the client
    ///   send requests to local services.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a character outside printable ASCII;
    ///   ``OIDCError/Code/insecureEndpoint`` for plain http the resource may not name.
    static func check(issuer: String, namedBy identifier: ResourceIdentifier) throws(OIDCError) {
        if let bad = firstNonPrintable(issuer) {
            throw OIDCError(
                .malformedResponse,
                "The resource \(identifier.value) names an authorization server that holds a character outside printable ASCII (\(codePoint(bad))); an issuer is a URL (RFC 8414 §2), so it is refused.",
                context: ["resource": identifier.value, "issuer": UntrustedText.sanitized(issuer), "rule": "RFC 8414 §2 issuer printable ASCII"])
        }
        guard let components = URLComponents(string: issuer), components.scheme?.lowercased() == "http" else { return }
        let host = components.host?.lowercased() ?? ""
        let resourceHost = URLComponents(string: identifier.value)?.host?.lowercased()
        if identifier.origin.hasPrefix("http://"), resourceHost == host { return }
        throw OIDCError(
            .insecureEndpoint,
            "The resource \(identifier.value) names the authorization server \(issuer) over plain http; refused: a plain-http issuer is taken only from a resource that is itself plain http on the same loopback host (a resource must not make the client send requests to local services). Its authorization server must use https.",
            context: ["resource": identifier.value, "issuer": issuer, "rule": "authorization_servers https"])
    }

    /// The endpoints of metadata fetched from an https issuer: each must be https too. Plain http
    /// on loopback is a local service, which a remote server must not make the client send its
    /// registration, its codes or its tokens to.
    ///
    /// - Throws: ``OIDCError/Code/insecureEndpoint`` naming the metadata member.
    static func checkEndpoints(of metadata: ProviderMetadata, issuer: String) throws(OIDCError) {
        guard URLComponents(string: issuer)?.scheme?.lowercased() == "https" else { return }
        var named: [(member: String, url: URL)] = ProviderEndpoint.allCases.compactMap { endpoint in
            metadata.endpoints[endpoint].map { (endpoint.member, $0) }
        }
        if let registration = metadata.registrationEndpoint { named.append(("registration_endpoint", registration)) }
        let aliases = metadata.advertised.mutualTLSEndpointAliases
        let aliased: [(String, URL?)] = [
            ("token_endpoint", aliases.tokenEndpoint), ("revocation_endpoint", aliases.revocationEndpoint),
            ("introspection_endpoint", aliases.introspectionEndpoint), ("device_authorization_endpoint", aliases.deviceAuthorizationEndpoint),
            ("pushed_authorization_request_endpoint", aliases.pushedAuthorizationRequestEndpoint), ("userinfo_endpoint", aliases.userinfoEndpoint),
        ]
        for case (let member, let url?) in aliased { named.append(("mtls_endpoint_aliases " + member, url)) }
        for (member, url) in named where url.scheme?.lowercased() != "https" {
            throw OIDCError(
                .insecureEndpoint,
                "The authorization server \(issuer) is https, and its metadata names its \(member) over plain http (\(UntrustedText.sanitized(url.absoluteString))); refused: the endpoints of an https server must be https.",
                context: ["issuer": issuer, "member": member, "rule": "RFC 8414 §2 https endpoints"])
        }
    }
}
