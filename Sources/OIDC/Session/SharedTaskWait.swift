import Foundation

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
    /// `@unchecked Sendable`: its one mutable field is guarded by `lock` (an `NSLock`, not a
    /// `Mutex`, which older Apple platforms lack).
    private final class Waiter<T: Sendable>: @unchecked Sendable {
        private enum State {
            case waiting
            case installed(CheckedContinuation<T, any Error>)
            case finished
        }
        private let lock = NSLock()
        private var value = State.waiting

        /// Whether the continuation is now waiting; when the caller was cancelled before, it is
        /// resumed at once with `CancellationError` instead.
        func install(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
            let cancelledBefore = lock.withLock { () -> Bool in
                guard case .waiting = value else { return true }
                value = .installed(continuation)
                return false
            }
            if cancelledBefore { continuation.resume(throwing: CancellationError()) }
            return !cancelledBefore
        }

        func finish(with result: Result<T, any Error>) {
            let continuation = lock.withLock { () -> CheckedContinuation<T, any Error>? in
                defer { value = .finished }
                if case .installed(let continuation) = value { return continuation }
                return nil
            }
            continuation?.resume(with: result)
        }
    }
}
