public import Foundation

/// Which URLs may carry OAuth traffic: https everywhere, plain http only to loopback hosts
/// (RFC 8252 §7.3, DESIGN §5).
public enum EndpointPolicy {
    /// Whether `host` is a loopback address or `localhost`.
    public static func isLoopback(host: String) -> Bool {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCIIDigit) && (Int(part) ?? 256) <= 255
        }
    }

    /// Checks that an endpoint is absolute, has no fragment, and is https (or http on loopback).
    ///
    /// - Parameter role: what the URL is for, named in the error (`authorization endpoint`).
    /// - Throws: ``OIDCError/Code/insecureEndpoint`` or ``OIDCError/Code/invalidArgument``.
    public static func validate(_ url: URL, role: String) throws(OIDCError) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw .invalidArgument("The \(role) '\(url.absoluteString)' must be an absolute http(s) URL with a host.")
        }
        guard url.fragment == nil else {
            throw .invalidArgument("The \(role) must not contain a fragment (RFC 6749 §3.1).")
        }
        switch scheme {
        case "https":
            return
        case "http" where isLoopback(host: host):
            return
        case "http":
            throw OIDCError(
                .insecureEndpoint,
                "The \(role) uses plain http on '\(host)'; use https (plain http is allowed only on loopback).",
                context: ["host": host]
            )
        default:
            throw .invalidArgument("The \(role) has the scheme '\(scheme)'; it must be https.")
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
