internal import Foundation
package import Logging

/// An authorization server's metadata found from its issuer alone, in the order the MCP
/// authorization spec (2025-11-25) gives: RFC 8414 with the issuer's path inserted
/// (`/.well-known/oauth-authorization-server{path}`), then OpenID discovery with the path inserted
/// (`/.well-known/openid-configuration{path}`, for an issuer with a path), then appended
/// (`{issuer}/.well-known/openid-configuration`). A 404 moves to the next; any other failure stops.
/// Whichever answers, its `issuer` must be the one asked for exactly (RFC 8414 §3.3).
package enum AuthorizationServerDiscovery {
    /// The server's metadata, and whether it is an OpenID provider: one that publishes keys
    /// (`jwks_uri`) and ID-token algorithms (`id_token_signing_alg_values_supported`, which OpenID
    /// discovery requires). Anything else is a plain OAuth 2.0 server: its logins ask for no
    /// `openid` and expect no ID token.
    package static func metadata(
        for issuer: String, transport: any HTTPTransport, options: HTTPRequestOptions, logger: Logger
    ) async throws(OIDCError) -> (metadata: ProviderMetadata, isOpenIDProvider: Bool) {
        for location in try documentURLs(for: issuer) {
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json")
            let response = try await transport.send(HTTPRequest(method: "GET", url: location, headers: headers), options: options)
            if response.status == 404 {
                logger.trace("no authorization server metadata here; trying the next location", metadata: ["url": .endpoint(location)])
                continue
            }
            guard response.status == 200 else {
                throw HTTPErrorMapping.unexpectedStatus(response, endpoint: location, what: "authorization server metadata")
            }
            let metadata = try ProviderMetadata(json: response.body, expectedIssuer: issuer, requiresKeys: false)
            let isOpenID = metadata.jwksURI != nil && metadata.advertised.idTokenSigningAlgValuesSupported != nil
            logger.debug(
                "authorization server metadata loaded",
                metadata: ["issuer": .issuer(issuer), "url": .endpoint(location), "openid": .bool(isOpenID)])
            return (metadata, isOpenID)
        }
        throw OIDCError(
            .malformedResponse, "The authorization server \(issuer) publishes no metadata (RFC 8414 or OpenID discovery).",
            context: ["issuer": issuer, "rule": "RFC 8414 §3"])
    }

    /// The locations, in order.
    static func documentURLs(for issuer: String) throws(OIDCError) -> [URL] {
        // An issuer is a URL (RFC 8414 §2): printable ASCII, which Foundation would otherwise
        // percent-encode for the request while the text, stored and printed, keeps it raw.
        if let bad = AuthorizationServerPolicy.firstNonPrintable(issuer) {
            throw OIDCError(
                .invalidArgument,
                "The issuer '\(UntrustedText.sanitized(issuer))' holds a character outside printable ASCII (\(AuthorizationServerPolicy.codePoint(bad))); an issuer is a URL (RFC 8414 §2).",
                context: ["rule": "RFC 8414 §2 issuer printable ASCII"])
        }
        guard let url = URL(string: issuer), var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.query == nil, components.fragment == nil, components.host != nil
        else { throw .invalidArgument("The issuer '\(UntrustedText.sanitized(issuer))' must be an absolute https URL without query or fragment.") }
        try EndpointURLPolicy.validate(url, role: "issuer")
        let path = components.percentEncodedPath == "/" ? "" : components.percentEncodedPath
        var urls: [URL] = []
        for suffix in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
            components.percentEncodedPath = suffix + path
            if let inserted = components.url { urls.append(inserted) }
        }
        if !path.isEmpty {
            let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            if let appended = URL(string: trimmed + "/.well-known/openid-configuration") { urls.append(appended) }
        }
        return urls
    }
}
