extension LoopbackRedirectListener {
    /// Where the listener binds, which path is the redirect, and its limits (RFC 8252 §7.3).
    public struct Configuration: Sendable {
        /// The addresses to bind, all of them; the redirect URI names the first. `[.ipv4]` by default.
        /// Endpoints after the first that ask for port 0 get the first one's port, so `127.0.0.1` and
        /// `::1` answer on one port.
        public var endpoints: [Endpoint]
        /// The redirect URI's path: starts with `/`, no query or fragment. `/callback` by default.
        public var callbackPath: String
        /// Connections open at once, 16 by default. When all are open, a new connection evicts the
        /// oldest one that has not sent its request head yet, so slow or silent connections cannot
        /// keep the browser out; when every open one has (each is being answered and closes once its
        /// answer is written), the new one is closed as soon as it is accepted.
        public var maximumConnections: Int
        /// A connection that sends nothing for this long is closed. 10 seconds by default.
        public var idleTimeout: Duration
        /// A connection that has not sent a whole request head this long after it was accepted is
        /// closed, however it trickles bytes in. 5 seconds by default: a browser sends its head within
        /// milliseconds of connecting, so this bounds only what a slow or hostile client can hold.
        public var requestHeadTimeout: Duration
        /// How long the first valid callback is held, when the start URL was opened before it, before
        /// it ends the wait: a request for the start URL in this time (or any time after the first one
        /// during the wait) aborts the login with ``OIDCError/Code/startURLReused``. 2 seconds by default.
        ///
        /// A program that read the start URL somewhere and opened it before the user's browser gets
        /// the authorization URL, could sign in with its own account and send that callback; the user's
        /// browser then still opens the start URL, a moment later, and that second request is what
        /// turns the swapped login into an abort. The hold covers a browser that starts up to about
        /// two seconds after the other program signed in. A callback that comes without the start URL
        /// having been opened is not held (nothing could have been raced). `.zero` holds nothing.
        public var callbackGrace: Duration

        /// A configuration with the given endpoints and callback path and the default limits.
        public init(endpoints: [Endpoint] = [.ipv4], callbackPath: String = "/callback") {
            self.endpoints = endpoints
            self.callbackPath = callbackPath
            self.maximumConnections = 16
            self.idleTimeout = .seconds(10)
            self.requestHeadTimeout = .seconds(5)
            self.callbackGrace = .seconds(2)
        }

        /// Checks everything that can be checked without binding.
        ///
        /// - Throws: ``OIDCError/Code/invalidArgument`` for no endpoint, a host given twice, a callback
        ///   path that is not an absolute path (or has a query, a fragment, or characters that must be
        ///   percent-encoded), a connection limit below 1, an idle or request-head timeout that is not
        ///   positive, or a negative callback grace.
        func validate() throws(OIDCError) {
            guard !endpoints.isEmpty else {
                throw .invalidArgument("The loopback listener needs at least one endpoint, such as 127.0.0.1:0.")
            }
            var hosts = Set<String>()
            for endpoint in endpoints {
                // Values built field by field bypass the checking initializer.
                let checked = try Endpoint(host: endpoint.host, port: endpoint.port)
                guard hosts.insert(checked.host).inserted else {
                    throw .invalidArgument(
                        "The host \(checked.authorityHost) is listed twice; give each loopback address once.",
                        context: ["endpoint": checked.description]
                    )
                }
            }
            guard Self.isValidPath(callbackPath) else {
                throw .invalidArgument(
                    "The callback path '\(UntrustedText.sanitized(callbackPath, limit: 64))' must start with '/' and contain no query, fragment, space or control character, such as /callback.",
                    context: ["callbackPath": UntrustedText.sanitized(callbackPath, limit: 64)]
                )
            }
            guard maximumConnections >= 1 else {
                throw .invalidArgument("maximumConnections must be at least 1, not \(maximumConnections).")
            }
            guard idleTimeout > .zero else {
                throw .invalidArgument("The idle timeout must be positive.")
            }
            guard requestHeadTimeout > .zero else {
                throw .invalidArgument("The request-head timeout must be positive.")
            }
            guard callbackGrace >= .zero else {
                throw .invalidArgument("The callback grace must not be negative.")
            }
        }

        /// An absolute path of RFC 3986 `pchar`s and `/` (percent-escapes allowed), at most 1 KiB.
        private static func isValidPath(_ path: String) -> Bool {
            guard path.hasPrefix("/"), path.utf8.count <= 1024 else { return false }
            return path.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default:
                    Array("-._~!$&'()*+,;=:@/%".utf8).contains(byte)
                }
            }
        }
    }
}
