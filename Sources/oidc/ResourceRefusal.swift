import Foundation
import OIDC

/// What `oidc request` adds when a resource refuses the token: the resource's own reason (its
/// challenge's `error` and `error_description`, RFC 6750 §3, short and sanitised) for a 401 or a
/// 403, and, when the 401's challenge names its metadata (RFC 9728 §5.1), the login that gets a
/// token for that resource.
enum ResourceRefusal {
    /// "The resource at URL refused the request (403: error ("description"))", for a 401 or 403
    /// whose `Bearer` or `DPoP` challenge carries an `error`; `nil` otherwise.
    static func reason(of response: HTTPResponse, from url: URL) -> String? {
        guard [401, 403].contains(response.status), let reason = RefusalReason.text(of: response) else { return nil }
        return "The resource at \(UntrustedText.sanitized(url.absoluteString, limit: 200)) refused the request (\(response.status): \(reason))."
    }

    /// The line after a 401 that a fresh token did not cure, when the resource published where its
    /// metadata is: `oidc login --profile P --resource 'URL'`, URL the resource that metadata
    /// describes (the well-known segment taken out, RFC 9728 §3.1), else the request's origin.
    static func loginHint(for error: OIDCError, profile: String, url: URL) -> String? {
        guard error.code == .unauthorized, let metadata = error.context["resource_metadata"] else { return nil }
        let resource = Self.resource(describedAt: metadata) ?? Self.origin(of: url)
        guard let resource else { return nil }
        let quoted = "'" + resource.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        return "oidc: the resource names its metadata (RFC 9728); to get a token for it, log in for this resource with: oidc login --profile \(profile) --resource \(quoted)"
    }

    /// The resource whose metadata is at `metadata`: `https://host/.well-known/oauth-protected-resource/x`
    /// describes `https://host/x`; `nil` for any other form, or text a person could not copy.
    static func resource(describedAt metadata: String) -> String? {
        let wellKnown = "/.well-known/oauth-protected-resource"
        guard var components = URLComponents(string: metadata), let scheme = components.scheme?.lowercased(),
              ["http", "https"].contains(scheme), components.host != nil, components.path.hasPrefix(wellKnown),
              metadata.unicodeScalars.allSatisfy({ $0.isASCII && !UntrustedText.isUnsafe($0) && $0 != " " }) else { return nil }
        let rest = String(components.path.dropFirst(wellKnown.count))
        guard rest.isEmpty || rest.hasPrefix("/") else { return nil }
        components.path = rest
        components.fragment = nil
        return components.string
    }

    private static func origin(of url: URL) -> String? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.path = ""
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        guard let origin = components.string, origin.unicodeScalars.allSatisfy({ $0.isASCII && !UntrustedText.isUnsafe($0) }) else { return nil }
        return origin
    }
}
