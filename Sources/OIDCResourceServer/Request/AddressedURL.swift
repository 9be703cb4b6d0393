internal import Foundation

/// "The URL the client addressed", built one way for every server that uses the kit: the URL a
/// DPoP proof's `htu` must name (RFC 9449 §4.3 step 9) and the resource its metadata describes.
///
/// - **The origin** is the configured public origin (``ResourceServer/Configuration/publicOrigin``)
///   when there is one: a server behind a proxy or load balancer names where clients reach it.
///   Otherwise it is the connection's scheme (`https` only when this server terminated TLS) and the
///   request's one `Host` (or HTTP/2 `:authority`).
/// - **`Host`**: at most one (RFC 9112 §3.2: several are a bad request, even when they agree), of
///   the form `host[:port]`: a name of letters, digits, `-`, `.`, `_`, `~`, or an IP literal in
///   brackets; a port of 1 to 5 digits, at most 65535. None is refused when there is no public
///   origin (the URL could not be built).
/// - **The request target**: origin-form (`/orders?page=2`), taken as received; absolute-form
///   (`https://api.example/orders`, RFC 9112 §3.2.2) only when its origin is the one above, else
///   refused (a target for another host); the asterisk and authority forms are refused. Visible
///   ASCII only, no fragment, at most 8 KiB.
/// - **`Forwarded`, `X-Forwarded-Host`, `X-Forwarded-Proto`, `X-Forwarded-Port` are never read**:
///   any client can send them; a deployment behind a proxy sets the public origin instead.
enum AddressedURL {
    /// The longest request target taken.
    static let maximumTargetLength = 8_192

    /// The URL `target` addresses, with `hosts` the request's `Host` values (and `:authority`),
    /// `scheme` the connection's, `publicOrigin` the configured one (checked, without a trailing `/`).
    static func url(target: String, hosts: [String], scheme: String, publicOrigin: String?) throws(Denial) -> URL {
        guard hosts.count <= 1 else {
            throw .invalidRequest(.malformedHost, "The request has more than one Host header (RFC 9112 §3.2).")
        }
        if let host = hosts.first, !isHostAndPort(host) {
            throw .invalidRequest(.malformedHost, "The request's Host header is not host[:port] (RFC 9112 §3.2).")
        }
        let origin: String
        if let publicOrigin {
            origin = publicOrigin
        } else {
            guard let host = hosts.first else {
                throw .invalidRequest(.malformedHost, "The request has no Host header, so the URL it addressed is unknown (RFC 9112 §3.2).")
            }
            let scheme = scheme.lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw .invalidRequest(.malformedRequestTarget, "The request came over a scheme other than http or https.")
            }
            origin = "\(scheme)://\(host)"
        }
        guard !target.isEmpty, target.utf8.count <= maximumTargetLength, target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !target.contains("#") else {
            throw .invalidRequest(.malformedRequestTarget, "The request target must be a path (or an absolute URL of this resource) of visible ASCII, without a fragment, of at most \(maximumTargetLength) bytes.")
        }
        let pathAndQuery: Substring
        if target.hasPrefix("/") {
            pathAndQuery = target[...]
        } else {
            // Absolute-form: only for this resource's own origin.
            guard let schemeEnd = target.range(of: "://"), ["http", "https"].contains(target[..<schemeEnd.lowerBound].lowercased()) else {
                throw .invalidRequest(.malformedRequestTarget, "The request target must be a path, or an absolute http(s) URL (RFC 9112 §3.2).")
            }
            let rest = target[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let named = String(target[..<authorityEnd])
            guard let mine = TargetURI.normalized(origin + "/"), let theirs = TargetURI.normalized(named + "/"), mine == theirs else {
                throw .invalidRequest(.malformedRequestTarget, "The request target is an absolute URL of another origin than this resource's.")
            }
            let remainder = rest[authorityEnd...]
            pathAndQuery = remainder.hasPrefix("/") ? remainder : "/" + remainder
        }
        guard let url = URL(string: origin + pathAndQuery), url.host != nil else {
            throw .invalidRequest(.malformedRequestTarget, "The request target does not make a URL with this resource's origin.")
        }
        return url
    }

    /// Why a configured public origin is not one.
    struct NotAnOrigin: Error {
        let why: String
    }

    /// The configured public origin as the URLs are built from it (`scheme://host[:port]`, no
    /// trailing `/`), or why it cannot be one.
    static func origin(_ url: URL) -> Result<String, NotAnOrigin> {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return .failure(NotAnOrigin(why: "must be an http or https URL")) }
        let text = url.absoluteString
        guard let authorityStart = text.range(of: "://")?.upperBound else { return .failure(NotAnOrigin(why: "must be an absolute URL")) }
        let rest = text[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        guard isHostAndPort(authority) else { return .failure(NotAnOrigin(why: "must name a host (and a port), without user information")) }
        guard rest[authorityEnd...] == "" || rest[authorityEnd...] == "/" else { return .failure(NotAnOrigin(why: "must be an origin: no path, query or fragment")) }
        return .success("\(scheme)://\(authority)")
    }

    /// `host[:port]`: a registered name of letters, digits, `-`, `.`, `_`, `~`, or an IP literal
    /// (`[` hex digits, `:` and `.` `]`); a port of 1 to 5 digits, at most 65535.
    static func isHostAndPort(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 261 else { return false }
        var index = 0
        if bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return false }
            guard bytes[1..<close].allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return false }
            index = close + 1
        } else {
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                guard TargetURI.isUnreserved(bytes[index]) else { return false }
                index += 1
            }
            guard index > 0 else { return false }
        }
        guard index < bytes.count else { return true }
        guard bytes[index] == UInt8(ascii: ":") else { return false }
        let digits = bytes[(index + 1)...]
        guard (1...5).contains(digits.count), digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 65_535
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}
