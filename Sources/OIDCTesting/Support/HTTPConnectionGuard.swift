internal import Foundation
internal import NIOCore
internal import NIOHTTP1

/// The open connections of one server against ``HTTPConnectionLimits/maximumConnections``. Every
/// access holds the lock, never across a suspension, hence `@unchecked Sendable`.
final class HTTPConnectionCount: @unchecked Sendable {
    private let lock = NSLock()
    private let maximum: Int
    private var open = 0

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Takes a slot for `channel` until it closes; `false` when all are taken.
    func admit(_ channel: any Channel) -> Bool {
        let admitted = lock.withLock {
            guard open < maximum else { return false }
            open += 1
            return true
        }
        if admitted { channel.closeFuture.whenComplete { _ in self.lock.withLock { self.open -= 1 } } }
        return admitted
    }

    /// How many connections hold a slot.
    var count: Int { lock.withLock { open } }
}

/// One connection's clock: idle (no request, or a body that stalls) for ``HTTPConnectionLimits/idleTimeout``,
/// or a request head unfinished ``HTTPConnectionLimits/requestHeadTimeout`` after its first byte,
/// and the connection is closed; nothing while a request is being answered.
///
/// One timer per connection, moved lazily: a deadline that moves later is only recorded, and the
/// timer, when it fires early, sets itself again for what is left. So a request costs a few clock
/// reads, not a scheduled task of its own. Event-loop only (its handlers own it).
final class HTTPConnectionDeadlines {
    private enum Phase { case idle, head, body, answering }

    private let channel: any Channel
    private let idleTimeout: TimeAmount
    private let headTimeout: TimeAmount
    private var phase = Phase.idle
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.distantFuture

    init(channel: any Channel, limits: HTTPConnectionLimits) {
        self.channel = channel
        idleTimeout = TimeAmount(limits.idleTimeout)
        headTimeout = TimeAmount(limits.requestHeadTimeout)
    }

    /// The two handlers to put around the HTTP codec: bytes before it, request and response parts after it.
    var handlers: (bytes: BytesWatcher, parts: PartsWatcher) { (BytesWatcher(self), PartsWatcher(self)) }

    func connectionStarted() { arm(idleTimeout) }

    func bytesArrived() {
        switch phase {
        case .idle:
            phase = .head
            arm(headTimeout)
        case .body:
            arm(idleTimeout)
        case .head, .answering:
            break
        }
    }

    func headReceived() {
        phase = .body
        arm(idleTimeout)
    }

    func requestReceived() {
        phase = .answering
        deadline = nil
    }

    func responseWritten() {
        phase = .idle
        arm(idleTimeout)
    }

    func connectionEnded() {
        deadline = nil
        timer?.cancel()
        timer = nil
    }

    private func arm(_ amount: TimeAmount) {
        let due = NIODeadline.now() + amount
        deadline = due
        if timer == nil || due < timerDeadline {
            timer?.cancel()
            schedule(due)
        }
    }

    private func schedule(_ due: NIODeadline) {
        timerDeadline = due
        timer = channel.eventLoop.assumeIsolated().scheduleTask(deadline: due) { self.fire() }
    }

    private func fire() {
        timer = nil
        guard let deadline else { return }
        if deadline <= .now() {
            channel.close(promise: nil)
        } else {
            schedule(deadline)
        }
    }

    /// Before the HTTP decoder (after TLS): sees that bytes of a request arrive.
    final class BytesWatcher: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private let deadlines: HTTPConnectionDeadlines

        init(_ deadlines: HTTPConnectionDeadlines) { self.deadlines = deadlines }

        func handlerAdded(context: ChannelHandlerContext) { deadlines.connectionStarted() }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            deadlines.bytesArrived()
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            deadlines.connectionEnded()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { deadlines.connectionEnded() }
    }

    /// After the HTTP codec: sees a request's head and end, and a response's end.
    final class PartsWatcher: ChannelDuplexHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart
        private let deadlines: HTTPConnectionDeadlines

        init(_ deadlines: HTTPConnectionDeadlines) { self.deadlines = deadlines }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: deadlines.headReceived()
            case .end: deadlines.requestReceived()
            case .body: break
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) { deadlines.responseWritten() }
            context.write(data, promise: promise)
        }
    }
}
