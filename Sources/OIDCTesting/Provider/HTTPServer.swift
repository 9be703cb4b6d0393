internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import NIOSSL
internal import struct OIDC.OIDCError
internal import enum OIDC.BindFailure

/// The NIO plumbing of the test provider, and nothing else: binds a loopback address, turns each
/// HTTP/1.1 request into a ``ProviderRequest``, hands it to the handler and writes the
/// ``ProviderResponse`` back. Owns its event-loop thread and its serving task; ``shutdown()`` ends
/// both, and waits for them.
actor HTTPServer {
    typealias Handler = @Sendable (ProviderRequest) async -> ProviderResponse
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// An accepted connection: served, or (over the connection limit) closed at once.
    struct Accepted: Sendable {
        var channel: any Channel
        var connection: Connection?
    }

    struct Limits: Sendable {
        var maximumBodySize: Int
        /// Sum of header names and values; NIO's parser has its own, larger bound too.
        var maximumHeaderSize = 16 * 1024
        /// How many connections, and how long each may wait for a whole request.
        var connections = HTTPConnectionLimits()
    }

    nonisolated let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: Channel
    private let serving: Task<Void, Never>
    private var isShutDown = false

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: Channel, serving: Task<Void, Never>) {
        self.port = port
        self.group = group
        self.listener = listener
        self.serving = serving
    }

    /// Binds `host:port` (the caller has checked that `host` is a loopback IP literal) and serves.
    static func start(
        host: String, port: Int, limits: Limits, tls: TestProvider.TLS? = nil, requestsClientCertificates: Bool = false,
        handler: @escaping Handler
    ) async throws -> HTTPServer {
        let sslContext = try tls.map { tls throws(OIDCError) in try makeSSLContext(tls, requestsClientCertificates: requestsClientCertificates) }
        try limits.connections.validate()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server: NIOAsyncChannel<Accepted, Never>
        let count = HTTPConnectionCount(maximum: limits.connections.maximumConnections)
        do {
            server = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Over the limit: closed by the serving loop, unread. (A failed set-up would end the listener.)
                        guard count.admit(channel) else { return Accepted(channel: channel, connection: nil) }
                        if let sslContext, requestsClientCertificates {
                            // Any certificate passes the handshake (which still proves its key is held):
                            // the endpoints decide what it is worth, as RFC 8705 §2.2 needs for self-signed ones.
                            let handler = NIOSSLServerHandler(context: sslContext) { _, promise in promise.succeed(.certificateVerified) }
                            try channel.pipeline.syncOperations.addHandler(handler)
                        } else if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                        }
                        let watchers = HTTPConnectionDeadlines(channel: channel, limits: limits.connections).handlers
                        try channel.pipeline.syncOperations.addHandler(watchers.bytes)
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(watchers.parts)
                        return Accepted(channel: channel, connection: try Connection(wrappingChannelSynchronously: channel))
                    }
                }
        } catch {
            try? await group.shutdownGracefully()
            // A privileged or taken port is said as such (not a bare errno), as the loopback listener says it.
            throw BindFailure.error(error, endpoint: "\(host):\(port)")
        }
        guard let boundPort = server.channel.localAddress?.port else {
            try? await server.channel.close()
            try? await group.shutdownGracefully()
            throw ChannelError.unknownLocalAddress
        }
        let serving = Task { await serve(server, limits: limits, handler: handler) }
        return HTTPServer(port: boundPort, group: group, listener: server.channel, serving: serving)
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

    /// Stops accepting, ends open connections (and requests in flight), then the event loop.
    /// Calling it again does nothing.
    func shutdown() async throws {
        guard !isShutDown else { return }
        isShutDown = true
        try? await listener.close()
        serving.cancel()
        await serving.value
        try await group.shutdownGracefully()
    }

    private static func serve(_ server: NIOAsyncChannel<Accepted, Never>, limits: Limits, handler: @escaping Handler) async {
        try? await server.executeThenClose { connections in
            await withDiscardingTaskGroup { group in
                do {
                    for try await accepted in connections {
                        guard let connection = accepted.connection else {
                            accepted.channel.close(promise: nil)
                            continue
                        }
                        group.addTask { await serve(connection, limits: limits, handler: handler) }
                    }
                } catch {
                    // The listener closed or the task was cancelled: stop accepting.
                }
                group.cancelAll()
            }
        }
    }

    /// One connection: requests in order, keep-alive honoured, oversized requests refused and closed.
    private static func serve(_ connection: Connection, limits: Limits, handler: @escaping Handler) async {
        let channel = connection.channel
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            // The TLS client certificate (DER), read once the handshake is done: at the first request.
            var peerCertificate: [UInt8]??
            var body: [UInt8] = []
            for try await part in inbound {
                switch part {
                case .head(let received):
                    head = received
                    body = []
                    let headerSize = received.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
                    if headerSize > limits.maximumHeaderSize {
                        try await write(.text("Request Header Fields Too Large", status: 431), keepAlive: false, to: outbound)
                        return
                    }
                    let declared = received.headers["Content-Length"].first.flatMap { Int($0) } ?? 0
                    if declared > limits.maximumBodySize {
                        try await write(.text("Content Too Large", status: 413), keepAlive: false, to: outbound)
                        return
                    }
                case .body(let chunk):
                    guard body.count + chunk.readableBytes <= limits.maximumBodySize else {
                        try await write(.text("Content Too Large", status: 413), keepAlive: false, to: outbound)
                        return
                    }
                    body.append(contentsOf: chunk.readableBytesView)
                case .end:
                    guard let request = head else { return }
                    head = nil
                    if peerCertificate == nil { peerCertificate = .some(await clientCertificate(of: channel)) }
                    var providerRequest = ProviderRequest(
                        method: request.method.rawValue, target: request.uri,
                        headers: request.headers.map { (name: $0.name, value: $0.value) }, body: body
                    )
                    providerRequest.clientCertificate = peerCertificate ?? nil
                    let response = await handler(providerRequest)
                    if response.dropsConnection || Task.isCancelled { return }
                    let keepAlive = request.isKeepAlive
                    try await write(response, keepAlive: keepAlive, to: outbound)
                    if !keepAlive { return }
                }
            }
        }
    }

    /// The DER of the certificate the TLS client presented; `nil` without TLS or without one.
    private static func clientCertificate(of channel: any Channel) async -> [UInt8]? {
        guard let certificate = try? await channel.nioSSL_peerCertificate().get() else { return nil }
        return try? certificate.toDERBytes()
    }

    private static func write(
        _ response: ProviderResponse, keepAlive: Bool, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = HTTPHeaders()
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers
        )
        // One write, so one hop to the event loop and one flush per response.
        if response.body.isEmpty {
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
        } else {
            try await outbound.write(contentsOf: [.head(head), .body(.byteBuffer(ByteBuffer(bytes: response.body))), .end(nil)])
        }
    }
}
