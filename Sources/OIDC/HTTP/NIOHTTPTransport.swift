internal import Foundation
public import Logging
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

/// The production ``HTTPTransport``: a small HTTP/1.1 client on SwiftNIO and swift-nio-ssl, with
/// keep-alive reuse, a deadline over the whole exchange, a response-size limit enforced while
/// reading, and optional TLS public-key pinning (``PublicKeyPin``).
///
/// ```swift
/// let transport = NIOHTTPTransport(configuration: .init(pins: [
///     PublicKeyPin(host: "login.example.com", sha256: ["<primary>", "<backup>"]),
/// ]))
/// defer { Task { try await transport.shutdown() } }   // or withNIOHTTPTransport { … }
/// let response = try await transport.send(HTTPRequest(url: discoveryURL))
/// ```
///
/// For a pinned host the server's chain is verified with OpenSSL (trust anchors, validity, purpose,
/// host name or IP address) and then one of its public keys must match a pin; if not, the handshake
/// fails and no request byte is ever written. Requests are always written only after the TLS
/// handshake has succeeded.
///
/// Runs on NIO's shared event-loop group (`MultiThreadedEventLoopGroup.singleton`); the transport
/// itself owns only its idle connections. Call ``shutdown()`` when done (or use
/// ``withNIOHTTPTransport(configuration:logger:_:)``), or use ``shared``, which lives as long as the process.
///
/// Plain `http` is sent to any host: the callers (the library's endpoint policy) decide where http is allowed.
///
/// With a ``logger``, each exchange is logged at `debug` (method, URL without its query, status,
/// duration), connection reuse and redirects at `trace`, and a pin mismatch at `warning`; header
/// fields and bodies never are (see <doc:Logging>).
public final class NIOHTTPTransport: HTTPTransport {
    /// How a transport connects and verifies servers.
    public struct Configuration: Sendable {
        /// Whether the system's trust store (`/etc/ssl/certs` on Debian, what NIOSSL and OpenSSL use by
        /// default) verifies servers. On by default; turn it off to trust only
        /// ``additionalTrustRootsPEM`` (a private CA).
        public var trustsSystemRoots: Bool
        /// More trusted CA certificates, PEM (each string may hold several).
        public var additionalTrustRootsPEM: [String]
        /// Public-key pins; hosts without a pin get normal certificate verification only.
        public var pins: [PublicKeyPin]
        /// Sent as `User-Agent` unless the request has one.
        public var userAgent: String
        /// How many idle keep-alive connections are kept per scheme, host and port (2 by default;
        /// 0 closes every connection after its response). Idle connections are dropped after 30 s.
        public var maximumIdleConnectionsPerHost: Int
        /// The certificate and key presented to every https server that asks for one (mutual TLS,
        /// RFC 8705): `tls_client_auth` or `self_signed_tls_client_auth` at the provider, and
        /// certificate-bound access tokens at the APIs. `nil` (the default) presents none.
        public var clientCertificate: TLSClientCertificate?
        /// The longest any one request may take, whatever its ``HTTPRequestOptions/timeout`` says:
        /// a bound the application sets once (a command's `--timeout`) over requests whose options
        /// the library chooses (discovery, the token endpoint). `nil` (the default) bounds nothing.
        public var maximumRequestTimeout: Duration?

        /// A configuration; by default the system roots are trusted, nothing is pinned, the user agent is
        /// `swift-oidc`, up to 2 idle connections per host are kept and no client certificate is presented.
        public init(
            trustsSystemRoots: Bool = true,
            additionalTrustRootsPEM: [String] = [],
            pins: [PublicKeyPin] = [],
            userAgent: String = "swift-oidc",
            maximumIdleConnectionsPerHost: Int = 2,
            clientCertificate: TLSClientCertificate? = nil
        ) {
            self.trustsSystemRoots = trustsSystemRoots
            self.additionalTrustRootsPEM = additionalTrustRootsPEM
            self.pins = pins
            self.userAgent = userAgent
            self.maximumIdleConnectionsPerHost = maximumIdleConnectionsPerHost
            self.clientCertificate = clientCertificate
        }

        /// Checks the pins, the trust roots, the client certificate and its key, and the user agent
        /// without connecting anywhere.
        ///
        /// - Throws: ``OIDCError/Code/invalidArgument`` naming what is wrong (never showing key material).
        public func validate() throws(OIDCError) {
            try validateNonTLS()
            _ = try TLSSetup(
                trustsSystemRoots: trustsSystemRoots, additionalTrustRootsPEM: additionalTrustRootsPEM, pins: pins, clientCertificate: clientCertificate)
        }

        /// The user agent and the idle-connection count (``TLSSetup`` checks the rest).
        func validateNonTLS() throws(OIDCError) {
            guard HTTPRequestWriter.isValidFieldValue(userAgent) else {
                throw .invalidArgument("The user agent must not contain line breaks or control characters.")
            }
            guard maximumIdleConnectionsPerHost >= 0 else {
                throw .invalidArgument("maximumIdleConnectionsPerHost must not be negative.")
            }
            if let maximumRequestTimeout, maximumRequestTimeout <= .zero {
                throw .invalidArgument("maximumRequestTimeout must be positive.")
            }
        }
    }

    /// A transport with the default configuration for the whole process: system trust store, no
    /// pins. Never needs ``shutdown()`` (calling it only closes its idle connections).
    public static let shared = NIOHTTPTransport(configuration: Configuration(), isShared: true)

    /// The configuration the transport was made with.
    public let configuration: Configuration
    /// Whether the transport presents ``Configuration/clientCertificate`` to servers that ask.
    public var presentsClientCertificate: Bool { configuration.clientCertificate != nil }
    private let group: any EventLoopGroup
    private let pool: ConnectionPool
    /// Built at `init`; a configuration error surfaces at the first request (see ``Configuration/validate()``).
    private let tls: Result<TLSSetup, OIDCError>
    private let isShared: Bool
    /// Where the exchanges are logged (label `oidc.transport` by convention); a logger that
    /// discards everything unless one was given.
    public let logger: Logger

    /// A transport on NIO's shared event loops. A configuration problem (a malformed pin or trust
    /// root) makes every request throw `invalidArgument`; call ``Configuration/validate()`` first to
    /// find it early.
    ///
    /// - Parameters:
    ///   - configuration: trust, pins, user agent and idle connections.
    ///   - logger: where requests are logged, without header fields, bodies or queries; `nil`
    ///     (the default) logs nothing and costs nothing.
    public convenience init(configuration: Configuration = .init(), logger: Logger? = nil) {
        self.init(configuration: configuration, isShared: false, logger: logger)
    }

    private init(configuration: Configuration, isShared: Bool, logger: Logger? = nil) {
        self.logger = logger ?? OIDCLog.transport
        self.configuration = configuration
        self.group = MultiThreadedEventLoopGroup.singleton
        self.pool = ConnectionPool(maximumPerHost: configuration.maximumIdleConnectionsPerHost)
        self.isShared = isShared
        do throws(OIDCError) {
            try configuration.validateNonTLS()
            self.tls = .success(
                try TLSSetup(
                    trustsSystemRoots: configuration.trustsSystemRoots,
                    additionalTrustRootsPEM: configuration.additionalTrustRootsPEM, pins: configuration.pins,
                    clientCertificate: configuration.clientCertificate
                )
            )
        } catch {
            self.tls = .failure(error)
        }
    }

    /// Closes the idle connections; requests made afterwards throw `invalidArgument` (except on
    /// ``shared``, which stays usable). Requests in flight finish or fail on their own.
    public func shutdown() async throws {
        await pool.shutdown(refusingNewConnections: !isShared)
    }

    /// Sends `request` and returns the whole response; any status is a response.
    ///
    /// - Throws: ``OIDCError``: `invalidArgument` (a scheme other than http/https, a malformed header,
    ///   a bad configuration, a shut-down transport), `networkFailure` (refused, reset, unresolvable, cut
    ///   off), `timedOut`, `tlsFailure`, `pinMismatch`, `responseTooLarge`, `insecureEndpoint` (a
    ///   redirect from https to http), `malformedResponse` (more than 5 redirects), `cancelled`.
    public func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
        guard options.timeout > .zero, options.maximumResponseSize >= 0 else {
            throw .invalidArgument("The timeout must be positive and the maximum response size not negative.")
        }
        let timeout = min(options.timeout, configuration.maximumRequestTimeout ?? options.timeout)
        do {
            return try await send(request, options: options, deadline: NIODeadline.now() + TimeAmount(timeout))
        } catch where error.code == .timedOut {
            // The exchange's own words say "the timeout": here it is named, as it was set.
            throw OIDCError(
                .timedOut, error.message.replacingOccurrences(of: "the timeout;", with: "\(Self.describe(timeout));"),
                context: error.context, providerError: error.providerError
            )
        }
    }

    /// "10 s", "1.5 s", "250 ms".
    static func describe(_ timeout: Duration) -> String {
        let (seconds, attoseconds) = timeout.components
        if attoseconds == 0 { return "\(seconds) s" }
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    private func send(_ request: HTTPRequest, options: HTTPRequestOptions, deadline: NIODeadline) async throws(OIDCError) -> HTTPResponse {
        var current = request
        var redirects = 0
        while true {
            let response = try await sendOnce(current, options: options, deadline: deadline)
            // A request with a DPoP proof is not redirected: the proof names its method and URL
            // (RFC 9449 §4.2), so the 3xx goes back to the caller, who can prove the new URL.
            guard options.followRedirects, Self.redirectStatuses.contains(response.status),
                ["GET", "HEAD"].contains(current.method.uppercased()), current.headers["DPoP"] == nil,
                let location = response.headers["Location"]
            else { return response }
            let host = current.url.host ?? ""
            guard redirects < Self.maximumRedirects else {
                throw OIDCError(
                    .malformedResponse, "\(host) redirected more than \(Self.maximumRedirects) times; check the URL.",
                    context: ["host": host]
                )
            }
            redirects += 1
            guard let next = URL(string: location, relativeTo: current.url)?.absoluteURL,
                let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https", next.host != nil
            else {
                throw OIDCError(
                    .malformedResponse, "\(host) redirected to a location that is not an http(s) URL.", context: ["host": host]
                )
            }
            if current.url.scheme?.lowercased() == "https", scheme == "http" {
                throw OIDCError(
                    .insecureEndpoint, "\(host) redirected from https to plain http; the redirect was not followed.",
                    context: ["host": host, "location": next.host ?? ""]
                )
            }
            logger.trace(
                "following redirect",
                metadata: ["from": .endpoint(current.url), "to": .endpoint(next), "status": .int(response.status), "redirects": .int(redirects)]
            )
            if !Self.sameOrigin(current.url, next) {
                // Credentials are for the origin they were given to.
                current.headers.remove("Authorization")
                current.headers.remove("Cookie")
                current.headers.remove("Proxy-Authorization")
            }
            current.url = next
        }
    }

    private static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    private static let maximumRedirects = 5

    private func sendOnce(_ request: HTTPRequest, options: HTTPRequestOptions, deadline: NIODeadline) async throws(OIDCError)
        -> HTTPResponse
    {
        let target = try HTTPRequestWriter.target(of: request.url)
        let head = try HTTPRequestWriter.head(for: request, target: target, userAgent: configuration.userAgent)
        let tls: TLSSetup?
        switch self.tls {
        case .success(let setup): tls = target.key.usesTLS ? setup : nil
        case .failure(let error): throw error
        }
        guard !pool.isClosed else {
            throw .invalidArgument("This NIOHTTPTransport was shut down; create a new one.")
        }
        let idempotent = ["GET", "HEAD", "OPTIONS"].contains(head.method.rawValue)
        // A reused keep-alive connection the server has just closed fails without an answer:
        // an idempotent request is then sent once more on a new connection.
        for attempt in 0..<2 {
            if Task.isCancelled {
                throw OIDCError(.cancelled, "The request to \(target.key.authority) was cancelled.", context: ["host": target.key.authority])
            }
            // Read the clock only when the line will be written: off, logging costs one level check.
            let start = logger.logLevel <= .debug ? ContinuousClock.now : nil
            let reused = pool.take(target.key)
            let connection: HTTPConnection
            if let reused {
                connection = reused
            } else {
                do {
                    connection = try await HTTPConnection.connect(key: target.key, group: group, tls: tls, deadline: deadline)
                } catch {
                    logFailure(error, request, start: start)
                    throw error
                }
            }
            do {
                let result = try await connection.execute(
                    head, body: request.body, maximumResponseSize: options.maximumResponseSize, deadline: deadline
                )
                if result.keepAlive { pool.put(connection) } else { connection.close() }
                if let start {
                    logger.debug(
                        "HTTP response",
                        metadata: [
                            "method": .string(head.method.rawValue), "url": .endpoint(request.url), "status": .int(result.response.status),
                            "duration_ms": .milliseconds(since: start), "connection": .string(reused == nil ? "new" : "reused"),
                            "bytes": .int(result.response.body.count),
                        ]
                    )
                }
                return result.response
            } catch {
                connection.close()
                if reused != nil, idempotent, attempt == 0, error.code == .networkFailure, NIODeadline.now() < deadline {
                    logger.trace("idle connection was closed by the server; sending again on a new one", metadata: ["url": .endpoint(request.url)])
                    continue
                }
                logFailure(error, request, start: start)
                throw error
            }
        }
        throw OIDCError(.networkFailure, "The request to \(target.key.authority) failed; try again.", context: ["host": target.key.authority])
    }

    private func logFailure(_ error: OIDCError, _ request: HTTPRequest, start: ContinuousClock.Instant?) {
        // Built only inside the log calls' autoclosures, so only for a level the handler takes.
        func metadata() -> Logger.Metadata {
            var metadata: Logger.Metadata = .failure(error)
            metadata["method"] = .string(request.method)
            metadata["url"] = .endpoint(request.url)
            if let start { metadata["duration_ms"] = .milliseconds(since: start) }
            return metadata
        }
        if error.code == .pinMismatch {
            // An operator must see this one: a rotated certificate outside the pins, or interception.
            logger.warning("TLS public key matches no pin; nothing was sent", metadata: metadata())
        } else {
            logger.debug("HTTP request failed", metadata: metadata())
        }
    }

    private static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        guard let first = try? HTTPRequestWriter.target(of: a), let second = try? HTTPRequestWriter.target(of: b) else { return false }
        return first.key == second.key
    }
}
