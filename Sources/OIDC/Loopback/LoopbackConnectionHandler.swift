internal import NIOCore
internal import NIOHTTP1

/// Sent down each connection's pipeline when the listener closes: an idle connection closes at
/// once, one that is answering closes when its answer is flushed.
struct LoopbackListenerClosing: Sendable {}

/// One connection of the loopback listener: answers its first request head (with
/// `Connection: close`), reads nothing of a body, and closes once the answer is flushed, or after
/// the idle timeout, or when the listener closes. (Its request-head deadline and its eviction are
/// ``LoopbackConnections``'.)
final class LoopbackConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: LoopbackState
    private var hasAnswered = false

    init(state: LoopbackState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data), !hasAnswered else { return }
        hasAnswered = true
        state.connections.headReceived(on: context.channel)
        let bodyless = head.method == .HEAD
        switch state.respond(to: head) {
        case .now(let response):
            write(response, bodyless: bodyless, context: context)
        case .later(let produce):
            // Answered on the event loop once made; the listener waits for it before it stops the loop.
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let loop = context.eventLoop
            state.trackDeferredAnswer(
                Task {
                    let response = await produce()
                    loop.execute {
                        let (handler, context) = bound.value
                        handler.write(response, bodyless: bodyless, context: context)
                    }
                })
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else if event is LoopbackListenerClosing {
            if !hasAnswered { context.close(promise: nil) }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func write(_ response: LoopbackResponse, bodyless: Bool, context: ChannelHandlerContext) {
        var headers = NIOHTTP1.HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !bodyless, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
