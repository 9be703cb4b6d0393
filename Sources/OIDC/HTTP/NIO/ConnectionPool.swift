internal import Foundation
internal import NIOCore

/// Idle keep-alive connections of one ``NIOHTTPTransport``, at most `maximumPerHost` per
/// scheme-host-port and each for at most `idleTimeout`; owns them and closes them on ``shutdown()``
/// or `deinit`.
///
/// A final class owning sockets with its state behind a lock (held only for dictionary updates,
/// never across a suspension), hence `@unchecked Sendable`.
final class ConnectionPool: @unchecked Sendable {
    private struct Idle {
        var connection: HTTPConnection
        var since: NIODeadline
    }

    private let lock = NSLock()
    private var idle: [ConnectionKey: [Idle]] = [:]
    private var isShutDown = false
    private let maximumPerHost: Int
    /// Bound on all idle connections together, whatever the number of hosts.
    private let maximumTotal: Int
    private let idleTimeout: TimeAmount

    init(maximumPerHost: Int, maximumTotal: Int = 64, idleTimeout: TimeAmount = .seconds(30)) {
        self.maximumPerHost = max(0, maximumPerHost)
        self.maximumTotal = maximumTotal
        self.idleTimeout = idleTimeout
    }

    deinit {
        for connections in idle.values { for entry in connections { entry.connection.close() } }
    }

    var isClosed: Bool { lock.withLock { isShutDown } }

    /// The most recently used open connection for `key`, or `nil`; closed and expired ones are dropped.
    func take(_ key: ConnectionKey) -> HTTPConnection? {
        var stale: [HTTPConnection] = []
        let found: HTTPConnection? = lock.withLock {
            guard var entries = idle[key] else { return nil }
            defer { idle[key] = entries.isEmpty ? nil : entries }
            let oldest = NIODeadline.now() - idleTimeout
            while let last = entries.popLast() {
                if last.connection.isActive, last.since > oldest { return last.connection }
                stale.append(last.connection)
            }
            return nil
        }
        for connection in stale { connection.close() }
        return found
    }

    /// Keeps `connection` for reuse, or closes it when the pool is full or shut down.
    func put(_ connection: HTTPConnection) {
        let kept = lock.withLock { () -> Bool in
            guard !isShutDown, connection.isActive else { return false }
            var entries = idle[connection.key] ?? []
            let total = idle.values.reduce(0) { $0 + $1.count }
            guard entries.count < maximumPerHost, total < maximumTotal else { return false }
            entries.append(Idle(connection: connection, since: .now()))
            idle[connection.key] = entries
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes the idle connections, and refuses further ones unless told otherwise; returns when
    /// they are closed.
    func shutdown(refusingNewConnections: Bool = true) async {
        let connections = lock.withLock { () -> [HTTPConnection] in
            if refusingNewConnections { isShutDown = true }
            defer { idle = [:] }
            return idle.values.flatMap { $0.map(\.connection) }
        }
        for connection in connections {
            try? await connection.channel.close()
        }
    }
}
