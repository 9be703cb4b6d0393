internal import Foundation
internal import NIOHTTP1

/// Turns an ``HTTPRequest`` into what goes on the wire: where to connect, the request target
/// (origin form: path and query, as encoded in the URL) and the request head with `Host`,
/// `User-Agent`, `Content-Length` and the caller's fields. Refuses what would make a malformed or
/// smuggled request; errors never quote a header value.
enum HTTPRequestWriter {
    struct Target: Sendable {
        var key: ConnectionKey
        /// `/path?query`.
        var requestTarget: String
        /// The `Host` field: the host, with the port unless it is the scheme's default.
        var hostField: String
    }

    /// - Throws: ``OIDCError/Code/invalidArgument`` for a URL that is not absolute http(s) with a host.
    static func target(of url: URL) throws(OIDCError) -> Target {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = components.host, !host.isEmpty
        else {
            throw .invalidArgument(
                "NIOHTTPTransport sends only absolute http and https URLs with a host, not '\(url.scheme ?? "(no scheme)")' URLs."
            )
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.lowercased()
        guard host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" && $0 != "@" }) else {
            throw .invalidArgument("The host '\(host)' is not a valid host name (use its punycode form).", context: ["host": host])
        }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65535).contains(port) else {
            throw .invalidArgument("The port \(port) is out of range.", context: ["host": host])
        }
        var requestTarget = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { requestTarget += "?" + query }
        guard requestTarget.hasPrefix("/"), requestTarget.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .invalidArgument("The URL's path or query contains characters that must be percent-encoded.", context: ["host": host])
        }
        let key = ConnectionKey(usesTLS: scheme == "https", host: host, port: port)
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return Target(key: key, requestTarget: requestTarget, hostField: port == defaultPort ? shownHost : "\(shownHost):\(port)")
    }

    /// Fields the transport sets itself; the caller's values are replaced.
    private static let managedFields: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

    /// - Throws: ``OIDCError/Code/invalidArgument`` for a method or header name that is not an RFC 9110
    ///   token, or a value with a control character (line breaks would smuggle headers).
    static func head(for request: HTTPRequest, target: Target, userAgent: String) throws(OIDCError) -> HTTPRequestHead {
        let method = request.method.uppercased()
        guard isToken(method) else { throw .invalidArgument("The HTTP method is not a valid token.") }
        var fields: [(String, String)] = [("Host", target.hostField)]
        for field in request.headers {
            guard isToken(field.name) else {
                throw .invalidArgument("A header name is not a valid HTTP token.", context: ["host": target.key.host])
            }
            guard isValidFieldValue(field.value) else {
                throw .invalidArgument(
                    "The value of the header '\(field.name)' contains a line break or control character.",
                    context: ["host": target.key.host]
                )
            }
            if managedFields.contains(field.name.lowercased()) { continue }
            fields.append((field.name, field.value))
        }
        if request.headers["User-Agent"] == nil { fields.append(("User-Agent", userAgent)) }
        if !request.body.isEmpty || !["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"].contains(method) {
            fields.append(("Content-Length", String(request.body.count)))
        }
        return HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: method), uri: target.requestTarget,
            headers: NIOHTTP1.HTTPHeaders(fields)
        )
    }

    private static let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)

    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy(tokenCharacters.contains)
    }

    /// No control characters but tab; no line breaks.
    static func isValidFieldValue(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }
    }
}
