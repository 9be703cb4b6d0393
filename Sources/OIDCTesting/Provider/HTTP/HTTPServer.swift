internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import NIOSSL
internal import struct OIDC.OIDCError
internal import enum OIDC.BindFailure

/// The NIO plumbing of the test provider, and nothing else: binds a loopback address, turns each
/// HTTP/1.1 request into a ``ProviderRequest``, hands it to the handler and writes the
/// ``ProviderResponse`` back (``HTTPRequestHandler``, one per connection). Owns its event-loop
/// thread; ``shutdown()`` ends the requests in flight, then the connections and the thread, and
/// waits for all of it.
actor HTTPServer {
    typealias Handler = @Sendable (ProviderRequest) async -> ProviderResponse

    struct Limits: Sendable {
        var maximumBodySize: Int
        /// Sum of header names and values; NIO's parser has its own, larger bound too.
        var maximumHeaderSize = 16 * 1024
        /// How many connections, and how long each may wait for a whole request.
        var connections = HTTPConnectionLimits()
    }

    /// A connection over ``HTTPConnectionLimits/maximumConnections``: closed at once, unread.
    private struct ConnectionRefused: Error {}

    nonisolated let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: Channel
    private let tasks: HTTPServerTasks
    private var isShutDown = false

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: Channel, tasks: HTTPServerTasks) {
        self.port = port
        self.group = group
        self.listener = listener
        self.tasks = tasks
    }

    /// Binds `host:port` (the caller has checked that `host` is a loopback IP literal) and serves.
    /// One event-loop thread does the I/O (two measured no faster with the load generator on the
    /// same two cores); the answers are computed on Swift's cooperative pool.
    static func start(
        host: String, port: Int, limits: Limits, tls: TestProvider.TLS? = nil, requestsClientCertificates: Bool = false,
        handler: @escaping Handler
    ) async throws -> HTTPServer {
        let sslContext = try tls.map { tls throws(OIDCError) in try makeSSLContext(tls, requestsClientCertificates: requestsClientCertificates) }
        try limits.connections.validate()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let count = HTTPConnectionCount(maximum: limits.connections.maximumConnections)
        let tasks = HTTPServerTasks()
        let listener: Channel
        do {
            listener = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Over the limit: the bootstrap closes a channel whose set-up failed (the listener goes on).
                        guard count.admit(channel) else { throw ConnectionRefused() }
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext, requestsClientCertificates {
                            // Any certificate passes the handshake (which still proves its key is held):
                            // the endpoints decide what it is worth, as RFC 8705 §2.2 needs for self-signed ones.
                            try pipeline.addHandler(NIOSSLServerHandler(context: sslContext) { _, promise in promise.succeed(.certificateVerified) })
                        } else if let sslContext {
                            try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                        }
                        let watchers = HTTPConnectionDeadlines(channel: channel, limits: limits.connections).handlers
                        try pipeline.addHandler(watchers.bytes)
                        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                        try pipeline.addHandler(watchers.parts)
                        try pipeline.addHandler(
                            HTTPRequestHandler(limits: limits, handler: handler, tasks: tasks, hasTLS: sslContext != nil)
                        )
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            try? await group.shutdownGracefully()
            // A privileged or taken port is said as such (not a bare errno), as the loopback listener says it.
            throw BindFailure.error(error, endpoint: "\(host):\(port)")
        }
        guard let boundPort = listener.localAddress?.port else {
            try? await listener.close()
            try? await group.shutdownGracefully()
            throw ChannelError.unknownLocalAddress
        }
        return HTTPServer(port: boundPort, group: group, listener: listener, tasks: tasks)
    }

    /// The server side of https from a PEM chain and key.
    /// With `requestsClientCertificates`, the server asks for a client certificate (optional).
    private static func makeSSLContext(_ tls: TestProvider.TLS, requestsClientCertificates: Bool) throws(OIDCError) -> NIOSSLContext {
        do {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(tls.certificateChainPEM.utf8))
            let key = try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem)
            guard !chain.isEmpty else { throw OIDCError(.invalidArgument, "empty chain") }
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)
            )
            if requestsClientCertificates { configuration.certificateVerification = .optionalVerification }
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw OIDCError(
                .invalidArgument,
                "The test provider's TLS certificate chain or private key is not usable PEM (a certificate chain and its key)."
            )
        }
    }

    /// Stops accepting, ends the requests in flight (their tasks cancelled, then awaited), then the
    /// connections and the event loops. Calling it again does nothing.
    func shutdown() async throws {
        guard !isShutDown else { return }
        isShutDown = true
        try? await listener.close()
        await tasks.cancelAllAndWait()
        try await group.shutdownGracefully()
    }
}
