import Foundation

/// Takes a few signals from the moment it is made, and hands the first one to ``next()``.
///
/// A server command makes it before it prints its address: a program that reads the address and
/// at once sends SIGTERM must stop it cleanly (exit 0), not kill it by the signal's default action
/// in the gap before a wait registers its handlers. A signal that comes before ``next()`` is called
/// is kept for it.
final class SignalWaiter: @unchecked Sendable {
    private let lock = NSLock()
    private var received: Int32?
    private var waiting: CheckedContinuation<Int32, Never>?
    private var registrations: [SignalSource.Registration] = []

    init(_ signals: [Int32]) {
        let queue = DispatchQueue(label: "oidc.signal-waiter")
        let registrations = signals.map { number in SignalSource.activate(number, queue: queue) { [weak self] in self?.deliver(number) } }
        lock.withLock { self.registrations = registrations }
    }

    /// The first signal taken (at once when it came already). The handlers stay installed, so a
    /// second signal during the shutdown does not kill the process half-way.
    func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let now = lock.withLock { () -> Int32? in
                if let received { return received }
                waiting = continuation
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Removes the handlers: the signals' default actions come back.
    func cancel() {
        lock.withLock { registrations }.forEach { $0.cancel() }
    }

    private func deliver(_ number: Int32) {
        let continuation = lock.withLock { () -> CheckedContinuation<Int32, Never>? in
            guard received == nil else { return nil }
            received = number
            defer { waiting = nil }
            return waiting
        }
        continuation?.resume(returning: number)
    }
}
