internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Binds the loopback listener's endpoints and sets up each accepted connection's pipeline.
struct LoopbackBinder {
    typealias Endpoint = LoopbackRedirectListener.Endpoint

    /// How often a shared ephemeral port is tried before giving up.
    static let maximumAttempts = 5

    let group: MultiThreadedEventLoopGroup
    let state: LoopbackState
    let idleTimeout: Duration
    let requestHeadTimeout: Duration

    /// Binds every endpoint; the ones after the first that ask for port 0 get the first one's port.
    /// Returns the server channels and the endpoints with their actual ports, in order.
    ///
    /// - Throws: ``OIDCError/Code/portInUse`` or ``OIDCError/Code/invalidArgument`` (see ``bindError(_:endpoint:)``).
    func bindAll(_ endpoints: [Endpoint]) async throws(OIDCError) -> ([any Channel], [Endpoint]) {
        var attempt = 1
        while true {
            var servers: [any Channel] = []
            var bound: [Endpoint] = []
            var retry = false
            for (index, endpoint) in endpoints.enumerated() {
                let sharesPort = index > 0 && endpoint.port == 0
                let wanted = Endpoint(validatedHost: endpoint.host, port: sharesPort ? bound[0].port : endpoint.port)
                do {
                    let server = try await bind(wanted)
                    servers.append(server)
                    guard let port = server.localAddress?.port else { throw ChannelError.unknownLocalAddress }
                    bound.append(Endpoint(validatedHost: endpoint.host, port: port))
                } catch {
                    for server in servers { try? await server.close() }
                    let taken = (error as? IOError)?.errnoCode == EADDRINUSE
                    if taken, sharesPort, endpoints[0].port == 0 {
                        guard attempt < Self.maximumAttempts else {
                            throw OIDCError(
                                .portInUse,
                                "No port was free on all of \(endpoints.map(\.authorityHost).joined(separator: ", ")) after \(Self.maximumAttempts) tries; try again, or give a fixed port.",
                                context: ["endpoint": wanted.description]
                            )
                        }
                        retry = true
                        break
                    }
                    throw Self.bindError(error, endpoint: wanted)
                }
            }
            if !retry { return (servers, bound) }
            attempt += 1
        }
    }

    /// One server socket, `SO_REUSEADDR` so that a fixed port can be bound again while the last
    /// login's connections are in `TIME_WAIT` (a port another program listens on stays refused).
    private func bind(_ endpoint: Endpoint) async throws -> any Channel {
        let address = try SocketAddress(ipAddress: endpoint.host, port: endpoint.port)
        let state = self.state
        let idleTimeout = TimeAmount(self.idleTimeout)
        let headTimeout = TimeAmount(self.requestHeadTimeout)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 32)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                // A refused connection is closed by the bootstrap when its set-up fails; a full
                // listener evicts its oldest connection without a request head instead.
                let connections = state.connections
                guard connections.admit(channel) else { return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
                // An absolute deadline for the head: an idle timeout alone is reset by every trickled byte.
                let deadline = channel.eventLoop.scheduleTask(in: headTimeout) { connections.closeIfHeadMissing(channel) }
                channel.closeFuture.whenComplete { _ in deadline.cancel() }
                return channel.eventLoop.makeCompletedFuture {
                    var limits = NIOHTTPDecoderLimitConfiguration()
                    limits.maxHeaderFieldSize = 16 * 1024
                    limits.maxHeaderListSize = 32 * 1024
                    limits.maxHeaderFieldCount = 100
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try pipeline.configureHTTPServerPipeline(
                        withPipeliningAssistance: false, withErrorHandling: true, withOutboundHeaderValidation: true,
                        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits
                    )
                    try pipeline.addHandler(LoopbackConnectionHandler(state: state))
                }
            }
            .bind(to: address)
            .get()
    }

    /// `portInUse` for a taken port; `invalidArgument` naming the endpoint and the system's reason otherwise.
    static func bindError(_ error: any Error, endpoint: Endpoint) -> OIDCError { BindFailure.error(error, endpoint: endpoint.description) }
}
