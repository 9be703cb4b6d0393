internal import NIOCore
internal import NIOHTTP1
internal import NIOSSL

/// One connection's requests, after the HTTP codec: each request gathered (head, bounded body),
/// answered by the server's handler in a task of its own, and its response written back on the
/// connection's event loop in one flush. NIO's pipelining handler
/// before this one holds a pipelined request back until the previous response is written, so a
/// connection has at most one request in flight. A request is not started while the connection
/// cannot take more writes (a client that pipelines requests and never reads its answers): it waits
/// for the socket to drain, so what is buffered for a connection stays within NIO's write
/// watermarks plus one answer. Oversized headers (431) and bodies (413) are answered and the
/// connection closed. Event-loop only.
final class HTTPRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let limits: HTTPServer.Limits
    private let handler: HTTPServer.Handler
    private let tasks: HTTPServerTasks
    private let hasTLS: Bool
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// After a refusal: the rest of the connection's input is ignored until it closes.
    private var isRefused = false
    /// The TLS client certificate (DER), read once the handshake is done: at the first request.
    private var peerCertificate: [UInt8]??
    /// A request received while the connection could not take more writes: started once it can.
    private var waiting: (request: ProviderRequest, keepAlive: Bool)?

    init(limits: HTTPServer.Limits, handler: @escaping HTTPServer.Handler, tasks: HTTPServerTasks, hasTLS: Bool) {
        self.limits = limits
        self.handler = handler
        self.tasks = tasks
        self.hasTLS = hasTLS
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isRefused else { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
            body = []
            let headerSize = received.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            if headerSize > limits.maximumHeaderSize {
                refuse(.text("Request Header Fields Too Large", status: 431), context: context)
            } else if let declared = received.headers.first(name: "Content-Length").flatMap({ Int($0) }), declared > limits.maximumBodySize {
                refuse(.text("Content Too Large", status: 413), context: context)
            }
        case .body(let chunk):
            guard body.count + chunk.readableBytes <= limits.maximumBodySize else {
                refuse(.text("Content Too Large", status: 413), context: context)
                return
            }
            body.append(contentsOf: chunk.readableBytesView)
        case .end:
            guard let received = head else { return }
            head = nil
            var request = ProviderRequest(
                method: received.method.rawValue, target: received.uri,
                headers: received.headers.map { (name: $0.name, value: $0.value) }, body: body
            )
            body = []
            request.clientCertificate = clientCertificate(context)
            if context.channel.isWritable {
                answer(request, keepAlive: received.isKeepAlive, context: context)
            } else {
                waiting = (request, received.isKeepAlive)
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let next = waiting {
            waiting = nil
            answer(next.request, keepAlive: next.keepAlive, context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Runs the handler in a task (on Swift's cooperative pool, where the handler's actors are: a task
    /// that preferred this event loop measured slower, each actor call then a thread switch both ways);
    /// writes its response (or closes) on the loop when it is done.
    private func answer(_ request: ProviderRequest, keepAlive: Bool, context: ChannelHandlerContext) {
        guard let id = tasks.reserve() else {
            context.close(promise: nil)
            return
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let handler = self.handler
        let tasks = self.tasks
        let task = Task {
            let response = await handler(request)
            let cancelled = Task.isCancelled
            if loop.inEventLoop {
                bound.value.handler.respond(response, keepAlive: keepAlive && !cancelled, drop: cancelled, context: bound.value.context)
            } else {
                loop.execute { bound.value.handler.respond(response, keepAlive: keepAlive && !cancelled, drop: cancelled, context: bound.value.context) }
            }
            tasks.finish(id)
        }
        tasks.attach(task, to: id)
    }

    private func respond(_ response: ProviderResponse, keepAlive: Bool, drop: Bool, context: ChannelHandlerContext) {
        if response.dropsConnection || drop {
            context.close(promise: nil)
            return
        }
        write(response, keepAlive: keepAlive, context: context)
    }

    private func refuse(_ response: ProviderResponse, context: ChannelHandlerContext) {
        isRefused = true
        head = nil
        body = []
        write(response, keepAlive: false, context: context)
    }

    private func write(_ response: ProviderResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.headers.count + 2)
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        // One flush per response.
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The DER of the certificate the TLS client presented; `nil` without TLS or without one.
    private func clientCertificate(_ context: ChannelHandlerContext) -> [UInt8]? {
        guard hasTLS else { return nil }
        if let known = peerCertificate { return known }
        let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate
        let der = certificate.flatMap { try? $0.toDERBytes() }
        peerCertificate = .some(der)
        return der
    }
}
