public import Foundation

/// The hosts that may receive the bearer token (the Swedbank Pay SDK's domain whitelist).
///
/// A request to any other host fails before anything is sent, so a redirect, a link in an API
/// answer or a typo cannot hand the token to someone else. Plain http is refused except to loopback.
public struct HostAllowlist: Sendable, Equatable {
    /// One allowed host, with or without its subdomains.
    public struct Entry: Sendable, Equatable {
        /// A host name or IP literal, compared case-insensitively, without a trailing dot.
        public var domain: String
        /// Whether `api.example.com` is allowed by `example.com`: any depth of subdomain.
        public var includesSubdomains: Bool

        /// An entry for `domain`, lowercased, without brackets or trailing dots; subdomains are included
        /// unless `includesSubdomains` is `false`.
        public init(_ domain: String, includesSubdomains: Bool = true) {
            self.domain = HostAllowlist.normalized(domain)
            self.includesSubdomains = includesSubdomains
        }
    }

    /// The allowed hosts.
    public var entries: [Entry]

    /// An explicit list; it replaces the default.
    public init(_ entries: [Entry]) { self.entries = entries }

    /// The default: the API base URL's host and its subdomains.
    public static func `default`(for apiBaseURL: URL) -> HostAllowlist {
        HostAllowlist([Entry(apiBaseURL.host ?? "", includesSubdomains: true)])
    }

    /// Whether `url` may carry the token: https (or http to a loopback host) to an allowed host.
    public func allows(_ url: URL) -> Bool { (try? check(url)) != nil }

    /// - Throws: ``OIDCError/Code/hostNotAllowed`` saying why.
    public func check(_ url: URL) throws(OIDCError) {
        guard let rawHost = url.host, !rawHost.isEmpty, let scheme = url.scheme?.lowercased() else {
            throw OIDCError(.hostNotAllowed, "The URL has no host; the bearer token is sent to allowlisted https hosts only.")
        }
        let host = Self.normalized(rawHost)
        // Letters, digits, dots and hyphens (or an IPv6 literal): a decoded %00, '/' or '@' never matches.
        guard host.unicodeScalars.allSatisfy({ $0.isASCII && (Self.hostCharacters.contains($0) || $0 == ":") }),
            !host.hasPrefix("."), !host.contains("..")
        else {
            throw OIDCError(.hostNotAllowed, "The URL's host is not a plain host name or IP address; the bearer token was not sent.")
        }
        guard scheme == "https" || (scheme == "http" && EndpointURLPolicy.isLoopback(host: host)) else {
            throw OIDCError(
                .hostNotAllowed, "The request to \(host) is not https; the bearer token is never sent in clear (http only to loopback).",
                context: ["host": host]
            )
        }
        let allowed = entries.contains { entry in
            !entry.domain.isEmpty && (host == entry.domain || (entry.includesSubdomains && host.hasSuffix("." + entry.domain)))
        }
        guard allowed else {
            throw OIDCError(
                .hostNotAllowed, "The host \(host) is not on the session's allowlist; the bearer token was not sent. Add it to the allowlist if it should get the token.",
                context: ["host": host]
            )
        }
    }

    private static let hostCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-")

    static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
