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
    /// metadata is: the login that gets a token for that resource (the well-known segment taken out
    /// of the metadata's URL, RFC 9728 §3.1, else the request's origin), as a profile of its own
    /// (`P-HOST-PORT`), so that the working login of `profile` is not replaced, with the profile's
    /// client id. When the login already is for that resource, no login would help: it says so.
    static func loginHint(for error: OIDCError, profile: String, login: ProfileLogin, url: URL) -> String? {
        guard error.code == .unauthorized, let metadata = error.context["resource_metadata"],
              let resource = Self.resource(describedAt: metadata) ?? Self.origin(of: url) else { return nil }
        if let current = login.login.resource, Self.trimmed(current) == Self.trimmed(resource) {
            return "oidc: the login of profile '\(ProfileName.shown(profile))' is for this resource already, and it refuses the login's tokens: it may take another audience than its URL, or trust another issuer (ask its operator)"
        }
        var command = "oidc login --profile \(Self.profileName(profile, for: resource)) --resource \(Self.quoted(resource))"
        if let clientID = login.boundProfile?.clientID, clientID.unicodeScalars.allSatisfy({ !UntrustedText.isUnsafe($0) }) {
            command += " --client-id \(Self.quoted(clientID))"
        }
        return "oidc: the resource names its metadata (RFC 9728); to get a token for it, log in for this resource as a profile of its own (so '\(ProfileName.shown(profile))' stays as it is): \(command)"
    }

    /// `P-HOST-PORT` for the resource's URL: letters, digits, `.`, `_` and `-` kept, the rest `-`.
    static func profileName(_ profile: String, for resource: String) -> String {
        let components = URLComponents(string: resource)
        let place = [components?.host, components?.port.map(String.init)].compactMap { $0 }.joined(separator: "-")
        let safe = String(String.UnicodeScalarView(place.unicodeScalars.map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || ".-_".unicodeScalars.contains(scalar)) ? scalar : "-"
        }))
        let name = profile + "-" + (safe.isEmpty ? "resource" : safe)
        let plain = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0)) }
        return plain ? name : Self.quoted(name)
    }

    /// Quoted for a POSIX shell: single quotes, a quote written `'\''`.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }

    private static func trimmed(_ resource: String) -> String { resource.hasSuffix("/") ? String(resource.dropLast()) : resource }

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
