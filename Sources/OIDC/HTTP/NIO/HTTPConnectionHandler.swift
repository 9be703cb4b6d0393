internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOSSL
internal import NIOTLS

/// One request on a connection, as ``HTTPConnection`` hands it to the channel.
struct HTTPExchange: Sendable {
    var head: HTTPRequestHead
    var body: [UInt8]
    var maximumResponseSize: Int
    var deadline: NIODeadline
    var promise: EventLoopPromise<HTTPExchangeResult>
}

/// A whole response and whether the connection may carry another request.
struct HTTPExchangeResult: Sendable {
    var response: HTTPResponse
    var keepAlive: Bool
}

/// The last handler of a client connection: reports when the connection is ready (TCP connected,
/// and for https the TLS handshake completed and verified), then runs one ``HTTPExchange`` at a time:
/// writes the request, collects the response within the size limit and the deadline, and fails the
/// exchange with an ``OIDCError`` when anything goes wrong (closing the connection).
///
/// Lives on its channel's event loop; nothing here is touched from anywhere else.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPExchange
    typealias OutboundOut = HTTPClientRequestPart

    private struct Pending {
        var exchange: HTTPExchange
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        /// Inside a 1xx response (103 Early Hints…), which is skipped.
        var skippingInformational = false
        var timer: Scheduled<Void>?
    }

    /// Host and port, for messages.
    private let authority: String
    private let usesTLS: Bool
    private let ready: EventLoopPromise<Void>
    private let readyDeadline: NIODeadline
    private var isReady = false
    private var readyTimer: Scheduled<Void>?
    private var pending: Pending?
    private var context: ChannelHandlerContext?
    /// The first error seen, to explain a later close.
    private var firstError: (any Error)?
    /// Set by the pinned-host verification callback when it refuses the chain.
    var tlsVerificationFailure: OIDCError?

    init(authority: String, usesTLS: Bool, ready: EventLoopPromise<Void>, readyDeadline: NIODeadline) {
        self.authority = authority
        self.usesTLS = usesTLS
        self.ready = ready
        self.readyDeadline = readyDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        readyTimer = context.eventLoop.scheduleTask(deadline: readyDeadline) {
            loopBound.value.failReady(
                OIDCError(
                    .timedOut,
                    "Connecting to \(loopBound.value.authority) took longer than the timeout; try again later or raise the timeout.",
                    context: ["host": loopBound.value.authority]
                )
            )
        }
        if context.channel.isActive { becameActive() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        readyTimer?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        becameActive()
        context.fireChannelActive()
    }

    private func becameActive() {
        if !usesTLS { markReady() }
    }

    private func markReady() {
        guard !isReady else { return }
        isReady = true
        readyTimer?.cancel()
        ready.succeed()
    }

    private func failReady(_ error: OIDCError) {
        guard !isReady else { return }
        isReady = true
        readyTimer?.cancel()
        ready.fail(error)
        context?.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted = tlsEvent {
            markReady()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if firstError == nil { firstError = error }
        let mapped = mapError(error)
        failReady(mapped)
        failPending(mapped)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let closed = firstError.map(mapError) ?? OIDCError(
            .networkFailure,
            usesTLS && !isReady
                ? "\(authority) closed the connection during the TLS handshake; check that it speaks https, then try again."
                : "\(authority) closed the connection before the response was complete; try again later.",
            context: ["host": authority]
        )
        failReady(closed)
        failPending(closed)
        context.fireChannelInactive()
    }

    // MARK: Request

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        guard pending == nil, isReady, context.channel.isActive else {
            let error = OIDCError(.networkFailure, "The connection to \(authority) is not available; try again.", context: ["host": authority])
            exchange.promise.fail(error)
            promise?.fail(error)
            return
        }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let timer = context.eventLoop.scheduleTask(deadline: exchange.deadline) {
            let handler = loopBound.value
            handler.failPending(
                OIDCError(
                    .timedOut,
                    "\(handler.authority) did not answer within the timeout; try again later or raise the timeout.",
                    context: ["host": handler.authority]
                )
            )
            handler.context?.close(promise: nil)
        }
        pending = Pending(exchange: exchange, timer: timer)
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if !exchange.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: exchange.body)))), promise: nil)
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { result in
            promise?.completeWith(result)
            if case .failure(let error) = result {
                loopBound.value.failPending(loopBound.value.mapError(error))
                loopBound.value.context?.close(promise: nil)
            }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }

    // MARK: Response

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard var current = pending else {
            // Bytes nobody asked for (or after a failure): this connection cannot be trusted any more.
            context.close(promise: nil)
            return
        }
        switch part {
        case .head(let head):
            if (100..<200).contains(head.status.code), head.status.code != 101 {
                current.skippingInformational = true
                pending = current
                return
            }
            if let declared = head.headers.first(name: "Content-Length").flatMap(Int.init),
                declared > current.exchange.maximumResponseSize
            {
                failTooLarge(current.exchange.maximumResponseSize, context: context)
                return
            }
            current.head = head
            pending = current
        case .body(let buffer):
            if current.skippingInformational { return }
            guard current.body.count + buffer.readableBytes <= current.exchange.maximumResponseSize else {
                failTooLarge(current.exchange.maximumResponseSize, context: context)
                return
            }
            // `current` shares its body with `pending`: drop that second reference first, so the
            // append grows the buffer in place instead of copying the whole body on every chunk
            // (quadratic: a 1 MiB answer in small reads took seconds in a debug build).
            pending = nil
            current.body.append(contentsOf: buffer.readableBytesView)
            pending = current
        case .end:
            if current.skippingInformational {
                current.skippingInformational = false
                pending = current
                return
            }
            guard let head = current.head else {
                failPending(OIDCError(.networkFailure, "\(authority) sent an invalid HTTP response.", context: ["host": authority]))
                context.close(promise: nil)
                return
            }
            pending = nil
            current.timer?.cancel()
            var headers = HTTPHeaders()
            for field in head.headers { headers.add(field.name, field.value) }
            let keepAlive = head.isKeepAlive && head.status.code != 101
            current.exchange.promise.succeed(
                HTTPExchangeResult(
                    response: HTTPResponse(status: Int(head.status.code), headers: headers, body: current.body),
                    keepAlive: keepAlive
                )
            )
            if !keepAlive { context.close(promise: nil) }
        }
    }

    private func failTooLarge(_ limit: Int, context: ChannelHandlerContext) {
        failPending(
            OIDCError(
                .responseTooLarge,
                "The response from \(authority) is larger than the limit of \(limit) bytes; raise maximumResponseSize if it is expected.",
                context: ["host": authority, "limit": String(limit)]
            )
        )
        context.close(promise: nil)
    }

    private func failPending(_ error: OIDCError) {
        guard let current = pending else { return }
        pending = nil
        current.timer?.cancel()
        current.exchange.promise.fail(error)
    }

    // MARK: Errors

    /// BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`) without its source path, or NIOSSL's case name.
    private static func reason(_ error: NIOSSLError) -> String {
        let text = String(describing: error)
        let reasons = text.components(separatedBy: "OPENSSL_internal:").dropFirst().compactMap { part in
            part.split(whereSeparator: { $0 == " " || $0 == ")" || $0 == "]" }).first.map(String.init)
        }
        return reasons.isEmpty ? String(text.prefix { $0 != "(" }) : reasons.joined(separator: ", ")
    }

    /// Turns a NIO, NIOSSL or HTTP parser error into an ``OIDCError`` that names the host and says
    /// what to do; never includes request or response content.
    private func mapError(_ error: any Error) -> OIDCError {
        if let error = error as? OIDCError { return error }
        if let failure = tlsVerificationFailure { return failure }
        let host = ["host": authority]
        switch error {
        case NIOSSLError.uncleanShutdown:
            return OIDCError(
                .networkFailure, "\(authority) closed the TLS connection before the response was complete; try again later.",
                context: host
            )
        case let error as NIOSSLError:
            return HTTPErrorMapping.tlsHandshakeFailure(authority: authority, reason: Self.reason(error))
        case let error as NIOSSLExtraError:
            return OIDCError(
                .tlsFailure,
                "The certificate of \(authority) failed verification (\(error)): it is not valid for this host name.",
                context: host
            )
        case is HTTPParserError:
            return OIDCError(
                .networkFailure, "The response from \(authority) is not valid HTTP/1.1 or was cut off; try again later.",
                context: host
            )
        default:
            return OIDCError(
                .networkFailure, "The connection to \(authority) failed (\(type(of: error))): try again later.",
                context: host.merging(["reason": String(describing: error)]) { first, _ in first }
            )
        }
    }
}
