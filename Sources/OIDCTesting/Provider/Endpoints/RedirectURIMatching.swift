/// Whether a redirect URI in a request is one the client registered (RFC 6749 §3.1.2.3: simple
/// string comparison), with RFC 8252 §7.3's exception: for a loopback IP literal (`127.0.0.1`,
/// `[::1]`) over http, the port is ignored. `localhost` is compared exactly.
enum RedirectURIMatching {
    /// Whether `presented` is one of `client`'s redirect URIs: exactly, port included, for a
    /// client registered at a provider that matches loopback ports exactly.
    static func matches(_ client: TestProvider.Client, presented: String) -> Bool {
        client.matchesLoopbackPortExactly
            ? !presented.contains("#") && client.redirectURIs.contains(presented) : matches(registered: client.redirectURIs, presented: presented)
    }

    static func matches(registered: [String], presented: String) -> Bool {
        registered.contains { matches(registered: $0, presented: presented) }
    }

    static func matches(registered: String, presented: String) -> Bool {
        guard !presented.contains("#") else { return false }
        if registered == presented { return true }
        guard let lhs = withoutLoopbackPort(registered), let rhs = withoutLoopbackPort(presented) else { return false }
        return lhs == rhs
    }

    /// `http://127.0.0.1:PORT/rest` → `http://127.0.0.1/rest`; `nil` unless a loopback IP literal URI.
    static func withoutLoopbackPort(_ uri: String) -> String? {
        for prefix in ["http://127.0.0.1", "http://[::1]"] where uri.hasPrefix(prefix) {
            var rest = uri.dropFirst(prefix.count)
            if rest.first == ":" {
                let digits = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
                guard (1...5).contains(digits.count), let port = Int(digits), port <= 65535 else { return nil }
                rest = rest.dropFirst(1 + digits.count)
            }
            // "http://127.0.0.1.example.com/" or "http://127.0.0.1@evil/" are not loopback.
            guard rest.isEmpty || rest.first == "/" || rest.first == "?" else { return nil }
            return prefix + rest
        }
        return nil
    }
}
