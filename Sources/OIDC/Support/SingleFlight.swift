import Foundation

/// One piece of work per key that every caller shares (a refresh, a discovery fetch, a JWKS
/// fetch): callers that come while it runs wait for the same task; a caller cancelled while it
/// waits stops waiting at once, and the work goes on for the others (a refresh stopped halfway
/// could lose tokens the provider has already rotated).
///
/// Kept by an actor as a stored value. The task the actor starts with ``launch(_:_:)`` ends its own
/// turn with ``land(_:_:)``, so a waiter that leaves early never makes the next caller start the
/// work twice.
///
/// ```swift
/// let task = flights.task(for: issuer) ?? flights.launch(issuer) { number in
///     Task { defer { self.flights.land(issuer, number) }; return try await fetch() }
/// }
/// return try await SingleFlight.value(of: task, cancelled: …, failed: …)
/// ```
package struct SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Flight: Sendable {
        let task: Task<Value, any Error>
        let number: Int
    }

    private var flights: [Key: Flight] = [:]
    private var launched = 0

    package init() {}

    /// The work in flight for `key`, if any.
    package func task(for key: Key) -> Task<Value, any Error>? { flights[key]?.task }

    /// Whether work is in flight for `key`.
    package func isRunning(_ key: Key) -> Bool { flights[key] != nil }

    /// Registers the task `start` makes as the work in flight for `key`. `start` gets the flight's
    /// number, which the task hands to ``land(_:_:)`` when it ends.
    package mutating func launch(_ key: Key, _ start: (Int) -> Task<Value, any Error>) -> Task<Value, any Error> {
        launched += 1
        let number = launched
        let task = start(number)
        flights[key] = Flight(task: task, number: number)
        return task
    }

    /// Ends flight `number` of `key`, unless a newer one has replaced it already.
    package mutating func land(_ key: Key, _ number: Int) {
        if flights[key]?.number == number { flights[key] = nil }
    }

    /// The value of `task`. A caller cancelled before or while it waits gets `cancelled` at once;
    /// the task runs on. An error that is not an ``OIDCError`` becomes `failed(error)`.
    package static func value(
        of task: Task<Value, any Error>, cancelled: @autoclosure () -> OIDCError, failed: (any Error) -> OIDCError
    ) async throws(OIDCError) -> Value {
        do { return try await wait(for: task) } catch let error as OIDCError { throw error } catch is CancellationError {
            throw cancelled()
        } catch {
            throw failed(error)
        }
    }

    /// The value of `task`; `CancellationError` as soon as the calling task is cancelled.
    private static func wait(for task: Task<Value, any Error>) async throws -> Value {
        let waiter = Waiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.install(continuation) else { return }
                Task { waiter.finish(with: await task.result) }
            }
        } onCancel: {
            waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// Resumes its continuation once: with the task's result or the cancellation, whichever comes
    /// first. `@unchecked Sendable`: its one mutable field is guarded by `lock` (an `NSLock`, not a
    /// `Mutex`, which older Apple platforms lack).
    private final class Waiter: @unchecked Sendable {
        private enum State {
            case waiting
            case installed(CheckedContinuation<Value, any Error>)
            case finished
        }
        private let lock = NSLock()
        private var state = State.waiting

        /// Whether the continuation is now waiting; when the caller was cancelled before, it is
        /// resumed at once with `CancellationError` instead.
        func install(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
            let cancelledBefore = lock.withLock { () -> Bool in
                guard case .waiting = state else { return true }
                state = .installed(continuation)
                return false
            }
            if cancelledBefore { continuation.resume(throwing: CancellationError()) }
            return !cancelledBefore
        }

        func finish(with result: Result<Value, any Error>) {
            let continuation = lock.withLock { () -> CheckedContinuation<Value, any Error>? in
                defer { state = .finished }
                if case .installed(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume(with: result)
        }
    }
}
