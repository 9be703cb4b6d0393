internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import NIOSSL

/// Where a connection goes; connections are reused only for the same key.
struct ConnectionKey: Hashable, Sendable {
    var usesTLS: Bool
    var host: String
    var port: Int

    /// `host:port`, IPv6 literals in brackets, for messages and the `Host` header.
    var authority: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(shownHost):\(port)"
    }
}

/// One open HTTP/1.1 connection (TLS already verified for https), carrying one exchange at a time.
final class HTTPConnection: Sendable {
    let key: ConnectionKey
    let channel: any Channel

    private init(key: ConnectionKey, channel: any Channel) {
        self.key = key
        self.channel = channel
    }

    var isActive: Bool { channel.isActive }

    func close() {
        channel.close(promise: nil)
    }

    /// Connects, and for https completes the TLS handshake (verified by `tls`) before returning:
    /// nothing is ever written to a connection whose handshake did not succeed.
    ///
    /// - Throws: ``OIDCError``: `networkFailure`, `timedOut`, `tlsFailure`, `pinMismatch`.
    static func connect(
        key: ConnectionKey, group: any EventLoopGroup, tls: TLSSetup?, deadline: NIODeadline
    ) async throws(OIDCError) -> HTTPConnection {
        if key.usesTLS { try tls?.prepare() }
        let eventLoop = group.next()
        let ready = eventLoop.makePromise(of: Void.self)
        let remaining = deadline - .now()
        guard remaining > .zero else {
            ready.fail(timeout(key))
            throw timeout(key)
        }
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(remaining)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = HTTPConnectionHandler(
                            authority: key.authority, usesTLS: key.usesTLS, ready: ready, readyDeadline: deadline
                        )
                        let operations = channel.pipeline.syncOperations
                        if key.usesTLS {
                            guard let tls else { throw OIDCError(.invalidArgument, "https needs a TLS setup.") }
                            try operations.addHandler(try tls.makeClientHandler(host: key.host, reportingTo: handler))
                        }
                        try operations.addHTTPClientHandlers()
                        try operations.addHandler(handler)
                    }
                }
                .connect(host: key.host, port: key.port)
                .get()
        } catch {
            let mapped = connectError(error, key: key)
            ready.fail(mapped)
            throw mapped
        }
        do {
            try await ready.futureResult.get()
        } catch {
            channel.close(promise: nil)
            throw (error as? OIDCError) ?? OIDCError(.networkFailure, "The connection to \(key.authority) failed.", context: ["host": key.authority])
        }
        return HTTPConnection(key: key, channel: channel)
    }

    /// Sends the request and returns the whole response; on failure the connection is closed.
    func execute(_ head: HTTPRequestHead, body: [UInt8], maximumResponseSize: Int, deadline: NIODeadline) async throws(OIDCError)
        -> HTTPExchangeResult
    {
        let promise = channel.eventLoop.makePromise(of: HTTPExchangeResult.self)
        let exchange = HTTPExchange(head: head, body: body, maximumResponseSize: maximumResponseSize, deadline: deadline, promise: promise)
        let key = self.key
        channel.writeAndFlush(exchange).whenFailure { _ in
            // Only when the handler never saw the exchange (a closed channel); otherwise ignored.
            promise.fail(OIDCError(.networkFailure, "The connection to \(key.authority) closed; try again.", context: ["host": key.authority]))
        }
        let channel = self.channel
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            channel.close(promise: nil)
            if Task.isCancelled {
                throw OIDCError(.cancelled, "The request to \(key.authority) was cancelled.", context: ["host": key.authority])
            }
            throw (error as? OIDCError) ?? OIDCError(.networkFailure, "The request to \(key.authority) failed.", context: ["host": key.authority])
        }
    }

    private static func timeout(_ key: ConnectionKey) -> OIDCError {
        OIDCError(
            .timedOut, "Connecting to \(key.authority) took longer than the timeout; try again later or raise the timeout.",
            context: ["host": key.authority]
        )
    }

    private static func connectError(_ error: any Error, key: ConnectionKey) -> OIDCError {
        let host = ["host": key.authority]
        switch error {
        case let error as OIDCError:
            return error
        case ChannelError.connectTimeout:
            return timeout(key)
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return OIDCError(
                    .networkFailure, "The host name '\(key.host)' could not be resolved; check the URL and the network, then try again.",
                    context: host
                )
            }
            let reasons = error.connectionErrors.map { failure -> String in
                if let io = failure.error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
                return String(describing: failure.error)
            }.joined(separator: "; ")
            return OIDCError(
                .networkFailure,
                "Could not connect to \(key.authority) (\(reasons.isEmpty ? "no address" : reasons)): check that the server is running and reachable, then try again.",
                context: host
            )
        default:
            return OIDCError(
                .networkFailure,
                "Could not connect to \(key.authority) (\(error)): check that the server is running and reachable, then try again.",
                context: host
            )
        }
    }
}
