internal import Synchronization

/// Waits for an operation at most until a time limit, without waiting for the operation itself to
/// end: a statement sent on a connection that has just died can stay pending forever (PostgresNIO
/// drops its promise), and a task group would wait for it. The operation runs in a task of its own,
/// cancelled when the limit passes or the caller is cancelled, and left behind if it ignores that.
enum Deadline {
    struct Expired: Error {}

    /// `operation`'s result, `Expired` after `limit`, or `CancellationError` when the caller is cancelled.
    static func run<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = Race<T>()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
                race.start(continuation, limit: limit, operation)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
        return try result.get()
    }

    /// The first of the operation, the timer and a cancellation to finish resumes the waiter; the
    /// others are cancelled.
    private final class Race<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<T, any Error>, Never>?
            var pending: Result<T, any Error>?
            var tasks: [Task<Void, Never>] = []
            var finished = false
        }
        private let state = Mutex(State())

        func start(
            _ continuation: CheckedContinuation<Result<T, any Error>, Never>, limit: Duration,
            _ operation: @escaping @Sendable () async throws -> T
        ) {
            // A cancellation may have finished the race before the continuation existed.
            let early: Result<T, any Error>? = state.withLock { state in
                if let pending = state.pending { return pending }
                state.continuation = continuation
                return nil
            }
            if let early {
                continuation.resume(returning: early)
                return
            }
            let work = Task {
                do { self.finish(.success(try await operation())) } catch { self.finish(.failure(error)) }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                self.finish(.failure(Expired()))
            }
            let cancelNow = state.withLock { state in
                state.tasks = [work, timer]
                return state.finished
            }
            if cancelNow {
                work.cancel()
                timer.cancel()
            }
        }

        func finish(_ result: Result<T, any Error>) {
            let (continuation, tasks): (CheckedContinuation<Result<T, any Error>, Never>?, [Task<Void, Never>]) = state.withLock { state in
                guard !state.finished else { return (nil, []) }
                state.finished = true
                if state.continuation == nil { state.pending = result }
                defer { state.continuation = nil }
                return (state.continuation, state.tasks)
            }
            for task in tasks { task.cancel() }
            continuation?.resume(returning: result)
        }
    }
}
