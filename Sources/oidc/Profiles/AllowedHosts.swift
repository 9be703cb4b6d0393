import ArgumentParser
import Foundation
import OIDC

/// The hosts `oidc request` may send a profile's bearer token to: the issuer's host (on the issuer's
/// port), and the hosts named with `--allow-host` at login or on the command: `api.example.com` for
/// that host alone, `.example.com` for example.com and its subdomains. A host typed in a URL is never
/// enough by itself: a typo or a URL from a variable must not carry the token away.
enum AllowedHosts {
    /// Checks `--allow-host` values: a host name with at least one dot (no bare `com`), `localhost`, or
    /// an IP address, optionally after a leading dot; no scheme, port, path or wildcard.
    static func validate(_ hosts: [String], flag: String = "--allow-host") throws {
        for host in hosts {
            var name = host.lowercased()
            if name.hasPrefix(".") { name.removeFirst() }
            let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-:").contains($0) }
            guard plain, !name.hasPrefix("."), !name.hasSuffix("."), !name.contains("..") else {
                throw ValidationError("\(flag): '\(UntrustedText.sanitized(host, limit: 80))' is not a host name (no scheme, port, path or wildcard; .example.com for subdomains)")
            }
            // One colon is a port (an IPv6 address has at least two): a named host is allowed on every port.
            if name.filter({ $0 == ":" }).count == 1, let colon = name.firstIndex(of: ":") {
                throw ValidationError(
                    "\(flag): '\(UntrustedText.sanitized(host, limit: 80))' names a port; give the host alone (\(UntrustedText.sanitized(String(name[..<colon]), limit: 80))), which is allowed on every port")
            }
            guard name.contains(".") || name.contains(":") || name == "localhost" else {
                throw ValidationError("\(flag): '\(UntrustedText.sanitized(host, limit: 80))' is too broad; name a host such as api.example.com")
            }
        }
    }

    /// The allowlist for `url`, after checking that `url` may get the token.
    ///
    /// - Throws: ``OIDCError/Code/hostNotAllowed`` (exit 6) saying how to allow the host.
    ///
    /// - Parameter resource: the login's resource (`oidc login --resource`, RFC 8707), whose host is
    ///   allowed on the resource's own port, as the issuer's is.
    static func allowlist(
        for url: URL, profile: Profile?, extra: [String], issuer: String, resource: String? = nil, profileName: String
    ) throws(OIDCError) -> HostAllowlist {
        let named = ((profile?.allowHosts ?? []) + extra).map { text -> HostAllowlist.Entry in
            let host = text.lowercased()
            return host.hasPrefix(".") ? HostAllowlist.Entry(String(host.dropFirst()), includesSubdomains: true) : HostAllowlist.Entry(host, includesSubdomains: false)
        }
        let origins = [URL(string: issuer), resource.flatMap(URL.init(string:))].compactMap { $0 }
        let allowlist = HostAllowlist(named + origins.map { HostAllowlist.Entry($0.host?.lowercased() ?? "", includesSubdomains: false) })
        let which = resource == nil ? "the issuer's host on its own port" : "the issuer's and the resource's hosts, each on its own port"
        func refuse(_ reason: String, context: [String: String]) -> OIDCError {
            // The named hosts, then the issuer's and the resource's origins with their ports: each once.
            var shown: [String] = []
            for entry in named.map({ ($0.includesSubdomains ? "." : "") + $0.domain }) + origins.map(Self.origin) where !shown.contains(entry) {
                shown.append(entry)
            }
            return OIDCError(
                .hostNotAllowed,
                "\(reason) The token of profile '\(profileName)' goes to \(shown.joined(separator: ", ")) only (\(which)); allow another host with: oidc login --profile \(profileName) --allow-host HOST (or --allow-host on this command).",
                context: context
            )
        }
        do { try allowlist.check(url) } catch { throw refuse(error.message, context: error.context) }
        // Allowed only as the issuer's (or the resource's) host: on its port too (on loopback, another port is another program).
        let host = url.host?.lowercased()
        if !HostAllowlist(named).allows(url), !origins.contains(where: { $0.host?.lowercased() == host && port(of: $0) == port(of: url) }) {
            let whose = resource == nil ? "the issuer's" : "the issuer's or the resource's"
            throw refuse("The URL's port is not \(whose); the bearer token was not sent.", context: ["host": url.host ?? ""])
        }
        return allowlist
    }

    /// `host`, or `host:port` when the port is not the scheme's default.
    private static func origin(_ url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[" + host + "]" : host
        let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url.port, port != defaultPort else { return shownHost }
        return shownHost + ":\(port)"
    }

    private static func port(of url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}
