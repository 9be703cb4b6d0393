#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

extension LoopbackRedirectListener {
    /// One loopback address and port the listener binds (RFC 8252 §7.3).
    ///
    /// The host is an IP literal, never a name: RFC 8252 §8.3 advises against `localhost`, which a
    /// resolver or a firewall may send elsewhere. IPv4 hosts are in `127.0.0.0/8` in strict dotted-quad
    /// form (no leading zeros, no shortened forms); the only IPv6 host is `::1`.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// The loopback IP literal: a `127.x.y.z` dotted quad, or `::1` (without brackets).
        public var host: String
        /// The TCP port; `0` lets the system choose a free one.
        public var port: Int

        /// An endpoint for a loopback IP literal and a port.
        ///
        /// - Throws: ``OIDCError/Code/invalidArgument`` when `host` is not a loopback IP literal
        ///   (`localhost` and other names included) or `port` is outside `0...65535`.
        public init(host: String, port: Int) throws(OIDCError) {
            self.init(validatedHost: try Self.canonicalLoopbackHost(host), port: try Self.validatedPort(port, in: host))
        }

        /// An endpoint written as on a command line: `127.0.0.1:8000`, `[::1]:0`, or a bare port
        /// (`8000`, meaning `127.0.0.1:8000`).
        ///
        /// - Throws: ``OIDCError/Code/invalidArgument`` naming the text and what to write instead.
        public init(parsing text: String) throws(OIDCError) {
            if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                try self.init(host: "127.0.0.1", port: try Self.parsePort(text[...], in: text))
                return
            }
            let host: Substring
            let portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else {
                    throw .invalidArgument(
                        "'\(Self.shown(text))' is not a listen address; write [::1]:PORT for IPv6.", context: ["endpoint": Self.shown(text)]
                    )
                }
                host = text[text.index(after: text.startIndex)..<close]
                let rest = text[text.index(after: close)...]
                guard rest.hasPrefix(":") else {
                    throw .invalidArgument(
                        "'\(Self.shown(text))' has no port; write [::1]:PORT (0 for any free port).", context: ["endpoint": Self.shown(text)]
                    )
                }
                portText = rest.dropFirst()
            } else {
                let colons = text.filter { $0 == ":" }.count
                guard colons == 1, let colon = text.firstIndex(of: ":") else {
                    let hint = colons > 1 ? "put an IPv6 address in brackets: [::1]:PORT" : "write HOST:PORT, such as 127.0.0.1:0"
                    throw .invalidArgument("'\(Self.shown(text))' is not a listen address; \(hint).", context: ["endpoint": Self.shown(text)])
                }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            let port = try Self.parsePort(portText, in: text)
            try self.init(host: String(host), port: port)
        }

        /// `127.0.0.1` on a port the system chooses.
        public static let ipv4 = Endpoint(validatedHost: "127.0.0.1", port: 0)
        /// `::1` on a port the system chooses (the listener gives it the IPv4 endpoint's port when both are bound).
        public static let ipv6 = Endpoint(validatedHost: "::1", port: 0)

        /// `127.0.0.1:8000`, or `[::1]:8000` for IPv6.
        public var description: String { "\(authorityHost):\(port)" }

        /// The host as written in a URL or a `Host` header: IPv6 in brackets.
        var authorityHost: String { isIPv6 ? "[\(host)]" : host }

        var isIPv6: Bool { host.contains(":") }

        init(validatedHost: String, port: Int) {
            self.host = validatedHost
            self.port = port
        }

        /// The canonical form of a loopback IP literal, parsed with `inet_pton`: a `127.0.0.0/8`
        /// dotted quad exactly as `inet_ntop` writes it back, or `::1` in any spelling.
        static func canonicalLoopbackHost(_ host: String) throws(OIDCError) -> String {
            let shownHost = shown(host)
            if host.lowercased() == "localhost" || host.lowercased().hasSuffix(".localhost") {
                throw .invalidArgument(
                    "The listen host '\(shownHost)' is a name; use the IP literal 127.0.0.1 (or [::1]) instead (RFC 8252 §8.3).",
                    context: ["host": shownHost]
                )
            }
            let literal = IPLiteral(host)
            if host.contains(":") {
                guard literal?.isLoopback == true else {
                    throw .invalidArgument(
                        "The listen host '\(shownHost)' is not a loopback address; the only IPv6 one is ::1 (RFC 8252 §7.3).",
                        context: ["host": shownHost]
                    )
                }
                return "::1"
            }
            var address = in_addr()
            guard inet_pton(AF_INET, host, &address) == 1 else {
                throw .invalidArgument(
                    "The listen host '\(shownHost)' is not an IP literal; use a loopback address such as 127.0.0.1 (RFC 8252 §7.3).",
                    context: ["host": shownHost]
                )
            }
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            let canonical = bytes.map(String.init).joined(separator: ".")
            guard literal?.isLoopback == true else {
                let hint = bytes.first == 127 ? "write it as \(canonical)" : "use an address in 127.0.0.0/8, such as 127.0.0.1"
                throw .invalidArgument(
                    "The listen host '\(shownHost)' is not a loopback IP literal; \(hint) (RFC 8252 §7.3).",
                    context: ["host": shownHost]
                )
            }
            return canonical
        }

        private static func validatedPort(_ port: Int, in host: String) throws(OIDCError) -> Int {
            guard (0...65535).contains(port) else {
                throw .invalidArgument(
                    "The port \(port) for \(shown(host)) is out of range; use 1-65535, or 0 for any free port.",
                    context: ["port": String(port)]
                )
            }
            return port
        }

        private static func parsePort(_ text: Substring, in whole: String) throws(OIDCError) -> Int {
            guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let port = Int(text), port <= 65535
            else {
                throw .invalidArgument(
                    "'\(shown(whole))' has no valid port; the port is a number 1-65535, or 0 for any free port.",
                    context: ["endpoint": shown(whole)]
                )
            }
            return port
        }

        /// Untrusted text as it may appear in a message: control characters replaced, bounded.
        private static func shown(_ text: String) -> String { UntrustedText.sanitized(text, limit: 64) }
    }
}
