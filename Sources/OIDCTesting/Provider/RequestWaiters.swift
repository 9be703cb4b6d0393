internal import Foundation

/// Tests waiting for the provider's counters to reach a number: ``TestProvider/nextRequest(_:grantType:)``
/// and ``TestProvider/waitForRequests(_:count:grantType:)``. Kept by ``ProviderState``, which resumes
/// them as it counts, so a waiter registered in the same step as it reads a counter misses no request.
struct RequestWaiters {
    /// What a waiter waits for: the counter of an endpoint, or of a grant type at the token endpoint.
    enum Counter: Hashable {
        case endpoint(TestProvider.Endpoint)
        case grant(String)
    }

    private struct Waiter {
        let counter: Counter
        let target: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private var waiters: [UUID: Waiter] = [:]

    /// Keeps `continuation` until `counter` reaches `target`.
    mutating func add(_ id: UUID, counter: Counter, target: Int, continuation: CheckedContinuation<Void, any Error>) {
        waiters[id] = Waiter(counter: counter, target: target, continuation: continuation)
    }

    /// Resumes (and forgets) every waiter whose counter has reached its target.
    mutating func resume(where value: (Counter) -> Int) {
        for (id, waiter) in waiters where value(waiter.counter) >= waiter.target {
            waiters[id] = nil
            waiter.continuation.resume()
        }
    }

    /// Ends a waiter with `CancellationError`, if it still waits.
    mutating func cancel(_ id: UUID) {
        waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }
}

extension ProviderState {
    /// The current value of `counter`.
    func count(_ counter: RequestWaiters.Counter) -> Int {
        switch counter {
        case .endpoint(let endpoint): requestCount(endpoint)
        case .grant(let grantType): grantCount(grantType)
        }
    }

    /// Returns once `counter` is at least `target` (at once if it already is); throws
    /// `CancellationError` when the waiting task is cancelled first.
    func wait(until counter: RequestWaiters.Counter, reaches target: Int) async throws {
        if count(counter) >= target { return }
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    requestWaiters.add(id, counter: counter, target: target, continuation: continuation)
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Waits for `counter` to grow by one from its value now.
    func waitForNext(_ counter: RequestWaiters.Counter) async throws {
        try await wait(until: counter, reaches: count(counter) + 1)
    }

    func cancelWaiter(_ id: UUID) { requestWaiters.cancel(id) }

    /// Resumes the waiters whose counter has been reached (after a request was counted).
    func resumeWaiters() {
        requestWaiters.resume(where: { count($0) })
    }
}
