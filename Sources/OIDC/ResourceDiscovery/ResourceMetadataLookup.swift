internal import Foundation
internal import Logging

/// Steps 1 and 2 of discovery from a resource: the unauthenticated request and its challenge,
/// the metadata document's location and the document, whose `resource` must be the identifier.
struct ResourceMetadataLookup {
    /// The resource whose metadata this is.
    var identifier: ResourceIdentifier
    var url: URL
    var document: ProtectedResourceMetadata
    var challenge: ResourceChallenge?

    static func find(
        _ identifier: ResourceIdentifier, transport: any HTTPTransport, options: HTTPRequestOptions, logger: Logger
    ) async throws(OIDCError) -> ResourceMetadataLookup {
        guard let resourceURL = URL(string: identifier.value) else {
            throw OIDCError(.invalidArgument, "The resource identifier is not a URL.", context: ["rule": "RFC 8707 §2"])
        }
        let probe = try await transport.send(HTTPRequest(method: "GET", url: resourceURL), options: options)
        let challenge = probe.status == 401 ? ResourceChallenge(probe) : nil
        var locations = identifier.metadataURLs
        if let named = challenge?.resourceMetadata {
            locations = [try checkedMetadataURL(named, for: identifier)]
        }
        for (index, location) in locations.enumerated() {
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json")
            let response = try await transport.send(HTTPRequest(method: "GET", url: location, headers: headers), options: options)
            if response.status == 404, index + 1 < locations.count {
                logger.trace("no protected resource metadata here; trying the next location", metadata: ["url": .endpoint(location)])
                continue
            }
            guard response.status == 200 else {
                throw HTTPErrorMapping.unexpectedStatus(response, endpoint: location, what: "protected resource metadata")
            }
            let type = response.headers.values("Content-Type").first?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard type == "application/json" else {
                throw OIDCError(
                    .malformedResponse, "The protected resource metadata at \(location.absoluteString) is not application/json (RFC 9728 §3.2).",
                    context: ["rule": "RFC 9728 §3.2 application/json"])
            }
            let document = try ProtectedResourceMetadata(json: response.body)
            let named: ResourceIdentifier
            do { named = try ResourceIdentifier(parsing: document.resource.absoluteString) } catch {
                throw mismatch(document.resource.absoluteString, identifier)
            }
            guard named.value == identifier.value else { throw mismatch(document.resource.absoluteString, identifier) }
            guard !document.authorizationServers.isEmpty else {
                throw OIDCError(
                    .noAuthorizationServer, "The protected resource metadata of \(identifier.value) lists no authorization server (RFC 9728 §2 authorization_servers).",
                    context: ["resource": identifier.value, "rule": "RFC 9728 §2 authorization_servers"])
            }
            logger.debug("protected resource metadata loaded", metadata: ["url": .endpoint(location), "challenge": .bool(challenge != nil)])
            return ResourceMetadataLookup(identifier: identifier, url: location, document: document, challenge: challenge)
        }
        throw OIDCError(.malformedResponse, "The resource \(identifier.value) publishes no metadata (RFC 9728 §3).", context: ["rule": "RFC 9728 §3"])
    }

    /// A `resource_metadata` URL, refused when it is on another origin than the resource over
    /// plain http, loopback included (another local port is another program, and a remote API
    /// must not make the client send requests to local services), and when it is not https (or
    /// http on loopback) at all.
    static func checkedMetadataURL(_ text: String, for identifier: ResourceIdentifier) throws(OIDCError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil else {
            throw OIDCError(
                .malformedResponse, "The 401's resource_metadata is not an absolute http(s) URL (RFC 9728 §5.1).",
                context: ["rule": "RFC 9728 §5.1 resource_metadata"])
        }
        if scheme == "http", !identifier.isSameOrigin(url) {
            throw OIDCError(
                .insecureEndpoint,
                "The 401's resource_metadata is on another origin over plain http; it is refused (use https).",
                context: ["rule": "resource_metadata https", "url": UntrustedText.sanitized(text)])
        }
        do { try EndpointURLPolicy.validate(url, role: "resource_metadata") } catch {
            throw OIDCError(.insecureEndpoint, error.message, context: ["rule": "resource_metadata https"])
        }
        return url
    }

    static func mismatch(_ found: String, _ identifier: ResourceIdentifier) -> OIDCError {
        OIDCError(
            .resourceMismatch,
            "The protected resource metadata names another resource than \(identifier.value); it must be identical (RFC 9728 §3.3).",
            context: ["expected": identifier.value, "found": UntrustedText.sanitized(found), "rule": "RFC 9728 §3.3 resource"])
    }

    /// The issuer to use: `requested` when the document lists it, else the first listed; held to
    /// ``AuthorizationServerPolicy/check(issuer:namedBy:)`` (printable ASCII; plain http only
    /// from a plain-http resource at the same host) before any request goes to it.
    func chooseServer(_ requested: String?) throws(OIDCError) -> String {
        guard let requested else {
            let first = document.authorizationServers[0]
            try AuthorizationServerPolicy.check(issuer: first, namedBy: identifier)
            return first
        }
        guard document.authorizationServers.contains(requested) else {
            // The ones listed, for a caller that explains the change (a profile that remembers its server).
            let listed = document.authorizationServers.prefix(8).map { UntrustedText.sanitized($0) }.joined(separator: " ")
            throw OIDCError(
                .resourceMismatch,
                "The protected resource metadata does not list the authorization server \(UntrustedText.sanitized(requested)).",
                context: ["issuer": UntrustedText.sanitized(requested), "listed": listed, "rule": "RFC 9728 §2 authorization_servers"])
        }
        try AuthorizationServerPolicy.check(issuer: requested, namedBy: identifier)
        return requested
    }
}
