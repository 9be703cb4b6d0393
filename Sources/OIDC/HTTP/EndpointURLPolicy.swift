package import Foundation

/// Which URLs may carry OAuth traffic: https everywhere, plain http only to loopback hosts
/// (RFC 8252 §7.3).
package enum EndpointURLPolicy {
    /// Whether `host` is a loopback IP literal (`127.0.0.0/8`, `::1`, with or without brackets),
    /// parsed strictly (`127.0.0.09` is a name, which a resolver would send to DNS), or
    /// the name `localhost`, which resolvers answer from the hosts file and never send out (RFC 6761
    /// §6.3). RFC 8252 §8.3 prefers the literal for redirect URIs; the loopback listener binds literals
    /// only.
    package static func isLoopback(host: String) -> Bool {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h == "localhost" { return true }
        return IPLiteral(h)?.isLoopback == true
    }

    /// What a `role` URL that is not absolute (`127.0.0.1:8080`, `login.example.com`) must be,
    /// with the URL it was probably meant as: `https://` before it, `http://` on loopback.
    package static func notAbsolute(_ text: String, role: String, extra: String = "") -> String {
        let rule = "The \(role) '\(text)' must be an absolute https URL\(extra), or http on a loopback address"
        guard let meant = withScheme(text) else { return rule + "." }
        return rule + ": \(meant)"
    }

    /// `https://TEXT`, or `http://TEXT` when its host is loopback: the URL a scheme-less `host:port`
    /// was meant as; `nil` when `text` has a scheme or makes no URL with a host.
    package static func withScheme(_ text: String) -> String? {
        guard !text.contains("://"), !text.hasPrefix("/"), let url = URL(string: "https://" + text), let host = url.host, !host.isEmpty
        else { return nil }
        return (isLoopback(host: host) ? "http://" : "https://") + text
    }

    /// Checks that an endpoint is absolute, has no fragment, and is https (or http on loopback).
    ///
    /// - Parameters:
    ///   - url: the endpoint.
    ///   - role: what the URL is for, named in the error (`authorization endpoint`).
    /// - Throws: ``OIDCError/Code/insecureEndpoint`` or ``OIDCError/Code/invalidArgument``.
    package static func validate(_ url: URL, role: String) throws(OIDCError) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw .invalidArgument(notAbsolute(url.absoluteString, role: role))
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
