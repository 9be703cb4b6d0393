internal import PostgresNIO
internal import Synchronization

/// A connection of the pool held by a task of its own, so that waiting for one can be bounded:
/// `PostgresClient.withConnection` waits for a free connection for as long as it takes, and a pool
/// whose connections all hold other logins' locks would stall ``PostgresTokenStore/withLock(_:_:)``
/// beyond every time limit.
final class ConnectionLease: Sendable {
    private enum State {
        case waiting(CheckedContinuation<PostgresConnection, any Error>?)
        case leased(PostgresConnection, done: CheckedContinuation<Void, Never>?)
        case failed(any Error)
        /// The waiter gave up (time limit, cancellation) or finished: the lease ends at once.
        case ended
    }
    private let state = Mutex(State.waiting(nil))
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// How long giving back a closed connection may wait for the pool to learn that it closed.
    private let settleLimit: Duration

    private init(settleLimit: Duration) { self.settleLimit = settleLimit }

    /// Leases a connection of `client`, waiting at most `limit`; ``end()`` gives it back, and a
    /// connection that closed meanwhile goes back only once the pool knows (``ConnectionEnd``), so
    /// that it is never handed out again.
    ///
    /// - Throws: `Deadline.Expired` when none was free in time, `CancellationError`, or the pool's error.
    static func lease(from client: PostgresClient, within limit: Duration) async throws -> (ConnectionLease, PostgresConnection) {
        let lease = ConnectionLease(settleLimit: limit)
        lease.task.withLock {
            $0 = Task {
                do {
                    try await client.withConnection { connection in
                        await lease.hold(connection)
                    }
                } catch {
                    lease.fail(error)
                }
            }
        }
        do {
            let connection = try await Deadline.run(limit) { try await lease.connection() }
            return (lease, connection)
        } catch {
            lease.end()
            throw error
        }
    }

    /// Gives the connection back to the pool (or stops waiting for one). Idempotent.
    func end() {
        let (waiter, done): (CheckedContinuation<PostgresConnection, any Error>?, CheckedContinuation<Void, Never>?) = state.withLock { state in
            defer { state = .ended }
            switch state {
            case .waiting(let waiter): return (waiter, nil)
            case .leased(_, let done): return (nil, done)
            case .failed, .ended: return (nil, nil)
            }
        }
        waiter?.resume(throwing: CancellationError())
        done?.resume()
        // Still queued in the pool: cancelling the task withdraws the request.
        if case .none = done { task.withLock { $0 }?.cancel() }
    }

    /// In the lease task: offers the connection, then keeps it until ``end()``, and, when it has
    /// closed by then, until the pool knows.
    private func hold(_ connection: PostgresConnection) async {
        await offer(connection)
        await ConnectionEnd.settle(connection, within: settleLimit)
    }

    private func offer(_ connection: PostgresConnection) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let (keep, waiter): (Bool, CheckedContinuation<PostgresConnection, any Error>?) = state.withLock { state in
                guard case .waiting(let pending) = state else { return (false, nil) }
                state = .leased(connection, done: done)
                return (true, pending)
            }
            guard keep else {
                done.resume()  // nobody wants it any more
                return
            }
            waiter?.resume(returning: connection)
        }
    }

    private func fail(_ error: any Error) {
        let waiter: CheckedContinuation<PostgresConnection, any Error>? = state.withLock { state in
            guard case .waiting(let pending) = state else { return nil }
            state = .failed(error)
            return pending
        }
        waiter?.resume(throwing: error)
    }

    /// The leased connection, once the pool has one.
    private func connection() async throws -> PostgresConnection {
        try await withCheckedThrowingContinuation { continuation in
            let now: Result<PostgresConnection, any Error>? = state.withLock { state in
                switch state {
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                case .leased(let connection, _): return .success(connection)
                case .failed(let error): return .failure(error)
                case .ended: return .failure(CancellationError())
                }
            }
            if let now { continuation.resume(with: now) }
        }
    }
}
