public import Foundation

/// A protected resource's identifier (RFC 8707 §2, RFC 9728 §1.2): an absolute `https` URL
/// (`http` on a loopback host) without a fragment or user information, its scheme and host in
/// lower case. Nothing else is changed: no slash is added or removed, the path and query stay as
/// written, so an identifier compares exactly with what a resource's metadata names and is sent
/// byte for byte as `resource`.
public struct ResourceIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The identifier as sent in `resource`.
    public let value: String
    /// `scheme://host[:port]`, lower case.
    package let origin: String
    /// The path, percent-encoded as written (`""` when the URL has none).
    let path: String
    /// The query after `?`, as written, if any.
    let query: String?

    /// The identifier of `url`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a URL that is not absolute http(s) with a
    ///   host, or has a fragment or user information (RFC 8707 §2); ``OIDCError/Code/insecureEndpoint``
    ///   for plain http off loopback.
    public init(_ url: URL) throws(OIDCError) {
        try self.init(parsing: url.absoluteString)
    }

    /// The identifier `text` names; as ``init(_:)``.
    public init(parsing text: String) throws(OIDCError) {
        func refuse(_ rule: String) -> OIDCError {
            OIDCError(
                .invalidArgument, "'\(UntrustedText.sanitized(text))' is not a resource identifier: \(rule) (RFC 8707 §2).",
                context: ["rule": rule])
        }
        guard text.utf8.count <= 2048, let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty,
            let separator = text.range(of: "://")
        else { throw refuse("an absolute http(s) URL with a host") }
        guard components.fragment == nil, !text.contains("#") else { throw refuse("no fragment") }
        guard components.user == nil, components.password == nil else { throw refuse("no user information") }
        if scheme == "http", !EndpointURLPolicy.isLoopback(host: host) {
            throw OIDCError(
                .insecureEndpoint, "The resource \(UntrustedText.sanitized(text)) is plain http off loopback; use https.",
                context: ["rule": "https"])
        }
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        origin = scheme + "://" + rest[..<authorityEnd].lowercased()
        let tail = rest[authorityEnd...]
        if let mark = tail.firstIndex(of: "?") {
            path = String(tail[..<mark])
            query = String(tail[tail.index(after: mark)...])
        } else {
            path = String(tail)
            query = nil
        }
        value = origin + tail
    }

    /// The identifier as sent (``value``).
    public var description: String { value }

    /// Where its metadata may be (RFC 9728 §3.1), in the order they are tried: the well-known
    /// suffix inserted between the host and the path (and query), then, for an identifier with a
    /// path, the origin's own `/.well-known/oauth-protected-resource` (MCP 2025-11-25's fallback).
    package var metadataURLs: [URL] {
        let wellKnown = origin + "/.well-known/oauth-protected-resource"
        // §3.1: a terminating "/" after the host is removed before the suffix is inserted.
        let trimmedPath = path == "/" ? "" : path
        let inserted = wellKnown + trimmedPath + (query.map { "?" + $0 } ?? "")
        return (inserted == wellKnown ? [wellKnown] : [inserted, wellKnown]).compactMap(URL.init(string:))
    }

    /// Whether `url` is at this identifier's origin.
    func isSameOrigin(_ url: URL) -> Bool {
        (try? ResourceIdentifier(parsing: url.absoluteString))?.origin == origin
    }
}
