public import struct OIDC.OIDCError

/// How many connections the kit's HTTP servers (``TestProvider``, `oidc provider`,
/// `oidc resource-server`) hold at once, and for how long one may sit without a whole request.
///
/// A connection over ``maximumConnections`` is closed as soon as it is accepted (nothing is
/// written to it); a connection that sends no request for ``idleTimeout`` (a keep-alive
/// connection between requests, one that never sends, or a request body that stalls) is closed;
/// a request head not complete within ``requestHeadTimeout`` of its first byte is closed, however
/// it trickles (slowloris). A request being answered is never timed out: the handler takes the
/// time it takes (``TestProvider/Fault/delay(_:)`` included).
public struct HTTPConnectionLimits: Sendable, Equatable {
    /// Connections open at once; 512 by default (a test suite's parallel clients fit many times
    /// over, and the process keeps far below a usual 1,024-descriptor limit).
    public var maximumConnections: Int
    /// How long a connection may receive nothing while no request is being answered; 30 seconds by default.
    public var idleTimeout: Duration
    /// How long a request head may take from its first byte to its blank line; 10 seconds by default.
    public var requestHeadTimeout: Duration

    /// The defaults: 512 connections, a 30-second idle timeout, a 10-second request-head timeout.
    public init(maximumConnections: Int = 512, idleTimeout: Duration = .seconds(30), requestHeadTimeout: Duration = .seconds(10)) {
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.requestHeadTimeout = requestHeadTimeout
    }

    /// - Throws: an `OIDCError` (`invalidArgument`) for a connection limit below 1 or a timeout that is not positive.
    public func validate() throws(OIDCError) {
        guard maximumConnections >= 1 else {
            throw OIDCError(.invalidArgument, "The connection limit must be at least 1, not \(maximumConnections).")
        }
        guard idleTimeout > .zero else { throw OIDCError(.invalidArgument, "The idle timeout must be positive.") }
        guard requestHeadTimeout > .zero else { throw OIDCError(.invalidArgument, "The request-head timeout must be positive.") }
    }
}
