import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A loopback HTTP/1.1 server for transport tests that answers each request with raw bytes chosen
/// by `respond` (so it can send what a well-behaved server never would: a truncated body, an
/// endless one, nothing at all). Plain or TLS; counts connections and remembers request heads.
final class RawHTTPServer: Sendable {
    enum Reply: Sendable {
        /// Write these bytes; close the connection afterwards if asked.
        case bytes([UInt8], thenClose: Bool = false)
        /// Read the request and never answer.
        case never
    }

    struct SeenRequest: Sendable {
        var method: String
        var uri: String
        var headers: [(name: String, value: String)]
    }

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let log: Log

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, log: Log) {
        self.port = port
        self.group = group
        self.channel = channel
        self.log = log
    }

    var connectionCount: Int { log.connections }
    var requests: [SeenRequest] { log.requests }

    static func start(
        tls: (chainPEM: String, keyPEM: String)? = nil,
        _ respond: @escaping @Sendable (SeenRequest) -> Reply
    ) async throws -> RawHTTPServer {
        let sslContext = try tls.map { tls in
            try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(tls.chainPEM.utf8)).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(tls.keyPEM.utf8), format: .pem))
                )
            )
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = Log()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        log.connected()
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                        }
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                        try channel.pipeline.syncOperations.addHandler(RawReplyHandler(log: log, respond: respond))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
            return RawHTTPServer(port: port, group: group, channel: channel, log: log)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    func url(_ path: String = "/", scheme: String = "http") -> URL {
        URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")!
    }

    func shutdown() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }

    /// `HTTP/1.1 <status>` with the fields and the body, `Content-Length` added unless a field
    /// sets `Transfer-Encoding`.
    static func response(status: Int, _ fields: [(String, String)] = [], body: [UInt8] = []) -> [UInt8] {
        var text = "HTTP/1.1 \(status) Whatever\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        if !fields.contains(where: { $0.0.lowercased() == "transfer-encoding" || $0.0.lowercased() == "content-length" }) {
            text += "Content-Length: \(body.count)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + body
    }

    /// Connections and requests seen; written on the server's event loop, read by the test.
    private final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var _connections = 0
        private var _requests: [SeenRequest] = []

        var connections: Int { lock.withLock { _connections } }
        var requests: [SeenRequest] { lock.withLock { _requests } }
        func connected() { lock.withLock { _connections += 1 } }
        func record(_ request: SeenRequest) { lock.withLock { _requests.append(request) } }
    }

    private final class RawReplyHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = ByteBuffer

        private let log: Log
        private let respond: @Sendable (SeenRequest) -> Reply
        private var head: HTTPRequestHead?

        init(log: Log, respond: @escaping @Sendable (SeenRequest) -> Reply) {
            self.log = log
            self.respond = respond
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let received):
                head = received
            case .body:
                break
            case .end:
                guard let head else { return }
                self.head = nil
                let seen = SeenRequest(
                    method: head.method.rawValue, uri: head.uri, headers: head.headers.map { (name: $0.name, value: $0.value) }
                )
                log.record(seen)
                switch respond(seen) {
                case .never:
                    break
                case .bytes(let bytes, let thenClose):
                    let written = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)))
                    if thenClose {
                        let channel = context.channel
                        written.whenComplete { _ in channel.close(promise: nil) }
                    }
                }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

/// Starts a ``RawHTTPServer``, runs `body`, and shuts the server down.
func withRawHTTPServer<T>(
    tls: (chainPEM: String, keyPEM: String)? = nil,
    _ respond: @escaping @Sendable (RawHTTPServer.SeenRequest) -> RawHTTPServer.Reply,
    _ body: (RawHTTPServer) async throws -> T
) async throws -> T {
    let server = try await RawHTTPServer.start(tls: tls, respond)
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

/// The PEM files of `Tests/OIDCTests/Fixtures/tls/` (test-only keys and certificates; see its README).
enum TLSFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/tls")

    static func pem(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? "missing fixture \(name)"
    }

    static var caPEM: String { pem("ca.pem") }
    static var serverChainPEM: String { pem("server.pem") }
    static var serverKeyPEM: String { pem("server-key.pem") }
    static var localhostOnlyPEM: String { pem("localhost-only.pem") }
    static var otherPEM: String { pem("other.pem") }
    static var otherKeyPEM: String { pem("other-key.pem") }

    /// SHA-256 pins of the fixtures' public keys (the README lists them too).
    static let caPin = "W5xgB1u3plhL79KaeSbpVA60TGs5HIB4W2M6J9wscKY="
    static let serverPin = "Pig4wbL3nNFI+X/lHTNr+OSzNCgOVqyFcTlfoV9qJTU="
    static let otherPin = "3+MAYT+pv3rfClvCmgu5YsZlR51YogVoDe2N9ulD4aU="
}
