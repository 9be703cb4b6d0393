import ArgumentParser
import Foundation
import OIDC

/// The hosts `oidc request` may send a profile's bearer token to: the profile's `--allow-host`
/// entries and the command's own, each with its subdomains; with none, the issuer's host alone (its
/// userinfo endpoint). A host typed in a URL is never enough by itself: a typo or a URL from a
/// variable must not carry the token away.
enum AllowedHosts {
    /// Checks `--allow-host` values: a host name with at least one dot (no bare `com`), `localhost`, or
    /// an IP address; no scheme, port, path or wildcard.
    static func validate(_ hosts: [String], flag: String = "--allow-host") throws {
        for host in hosts {
            let name = host.lowercased()
            let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-:[]").contains($0) }
            guard plain, !name.hasPrefix("."), !name.hasSuffix("."), !name.contains("..") else {
                throw ValidationError("\(flag): '\(Display.sanitized(host, limit: 80))' is not a host name (no scheme, port, path or wildcard)")
            }
            guard name.contains(".") || name.contains(":") || name == "localhost" else {
                throw ValidationError("\(flag): '\(Display.sanitized(host, limit: 80))' is too broad; name a host such as api.example.com")
            }
        }
    }

    static func allowlist(profile: Profile?, extra: [String], issuer: String) -> HostAllowlist {
        let named = (profile?.allowHosts ?? []) + extra.map { $0.lowercased() }
        if !named.isEmpty { return HostAllowlist(named.map { HostAllowlist.Entry($0) }) }
        return HostAllowlist([HostAllowlist.Entry(URL(string: issuer)?.host ?? "", includesSubdomains: false)])
    }
}
