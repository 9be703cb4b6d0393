import Foundation
import OIDC

/// A ``LoginClock`` the test moves: its date is the wall clock's plus what ``advance(by:)`` added,
/// and a sleep ends when an advance passes its deadline (or the task is cancelled), never by itself.
final class ManualLoginClock: @unchecked Sendable {
    private struct Sleeper {
        let id: Int
        let deadline: TimeInterval
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var offset: TimeInterval = 0
    private var nextID = 0
    private var sleepers: [Sleeper] = []
    private var sleeps = 0
    private var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// The clock for a login flow.
    var clock: LoginClock {
        LoginClock(now: { [self] in Date().addingTimeInterval(lock.withLock { offset }) }, sleep: { [self] in try await sleep($0) })
    }

    /// Moves the clock on by `seconds`, ending the sleeps whose deadline it passes.
    func advance(by seconds: TimeInterval) {
        let due = lock.withLock {
            offset += seconds
            let due = sleepers.filter { $0.deadline <= offset }
            sleepers.removeAll { $0.deadline <= offset }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once `count` sleeps have started since the clock was made (the event a test waits
    /// for before it moves the clock).
    func sleepsStarted(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if sleeps >= count { return true }
                watchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func sleep(_ duration: Duration) async throws {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                    sleepers.append(Sleeper(id: id, deadline: offset + seconds, continuation: continuation))
                    sleeps += 1
                    let woken = watchers.filter { $0.count <= sleeps }.map(\.continuation)
                    watchers.removeAll { $0.count <= sleeps }
                    return woken
                }
                for watcher in woken { watcher.resume() }
                if Task.isCancelled { cancel(id) }
            }
        } onCancel: {
            cancel(id)
        }
    }

    private func cancel(_ id: Int) {
        let sleeper = lock.withLock { () -> Sleeper? in
            guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
            return sleepers.remove(at: index)
        }
        sleeper?.continuation.resume(throwing: CancellationError())
    }
}
