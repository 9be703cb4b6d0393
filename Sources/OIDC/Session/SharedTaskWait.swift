import Synchronization

/// Waits for a task that several callers share (the session's one refresh), so that a caller
/// cancelled meanwhile stops waiting at once, while the task itself runs on for the others: a
/// refresh stopped halfway could lose tokens the provider has already rotated.
enum SharedTaskWait {
    /// The value of `task`; `CancellationError` as soon as the calling task is cancelled.
    static func value<T: Sendable>(of task: Task<T, any Error>) async throws -> T {
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.install(continuation) else { return }
                Task { waiter.finish(with: await task.result) }
            }
        } onCancel: {
            waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// Resumes its continuation once: with the task's result or the cancellation, whichever comes first.
    private final class Waiter<T: Sendable>: Sendable {
        private enum State {
            case waiting
            case installed(CheckedContinuation<T, any Error>)
            case finished
        }
        private let state = Mutex(State.waiting)

        /// Whether the continuation is now waiting; when the caller was cancelled before, it is
        /// resumed at once with `CancellationError` instead.
        func install(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
            let cancelledBefore = state.withLock { state -> Bool in
                guard case .waiting = state else { return true }
                state = .installed(continuation)
                return false
            }
            if cancelledBefore { continuation.resume(throwing: CancellationError()) }
            return !cancelledBefore
        }

        func finish(with result: Result<T, any Error>) {
            let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
                defer { state = .finished }
                if case .installed(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume(with: result)
        }
    }
}
