internal import Foundation

/// The requests a server is answering (each a task), so that ``HTTPServer/shutdown()`` can cancel
/// them and wait for every one to end before it stops the event loops their tasks run on. Every
/// access holds the lock, never across a suspension, hence `@unchecked Sendable`.
final class HTTPServerTasks: @unchecked Sendable {
    private let lock = NSLock()
    private var nextID: UInt64 = 0
    /// Tasks by id; `nil` between ``reserve()`` and ``attach(_:to:)``.
    private var running: [UInt64: Task<Void, Never>?] = [:]
    private var isClosed = false
    private var drained: [CheckedContinuation<Void, Never>] = []

    /// An id for a request about to start; `nil` once the server is shutting down (do not start it).
    func reserve() -> UInt64? {
        lock.withLock {
            guard !isClosed else { return nil }
            nextID &+= 1
            running[nextID] = .some(nil)
            return nextID
        }
    }

    /// Records the task of request `id` (unless it has already ended); cancels it when the server
    /// began to shut down meanwhile.
    func attach(_ task: Task<Void, Never>, to id: UInt64) {
        let cancel: Bool = lock.withLock {
            guard running[id] != nil else { return false }
            running[id] = task
            return isClosed
        }
        if cancel { task.cancel() }
    }

    /// Request `id` has ended (its response written, or given up).
    func finish(_ id: UInt64) {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            running[id] = nil
            guard isClosed, running.isEmpty else { return [] }
            defer { drained = [] }
            return drained
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Refuses new requests, cancels those running, and returns once every one has ended.
    func cancelAllAndWait() async {
        let tasks: [Task<Void, Never>] = lock.withLock {
            isClosed = true
            return running.values.compactMap { $0 }
        }
        for task in tasks { task.cancel() }
        await withCheckedContinuation { continuation in
            let done: Bool = lock.withLock {
                guard !running.isEmpty else { return true }
                drained.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
