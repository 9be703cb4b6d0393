import Foundation
import OIDC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Holds SIGINT, SIGTERM and SIGHUP back while a refresh may leave the store behind the provider (the
/// library's `RefreshCommit`): from the moment the refresh is sent (the provider may spend the old
/// refresh token and rotate it before its answer arrives) to the durable save of its replacement.
/// A signal outside that span ends the process at once, as the signal's default action does. One
/// while the answer is on its way waits for it at most `RefreshCommit.sendingBound` (5 s), then ends
/// the process (an answer may never come); one once the answer has come waits for the save. Ctrl-C
/// in a terminal, `timeout`, a CI job's limit or kubectl's cancelled context then leave the spent
/// refresh token in the store only when the answer takes longer than the bound to arrive, as a lost
/// answer would. SIGKILL cannot be held back; it needs the milliseconds of the save.
final class SignalShield: RefreshCommit.Shield, @unchecked Sendable {
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private static let shared = SignalShield()

    private let lock = NSLock()
    /// Open commits without a bound (the answer has come; the save is under way).
    private var depth = 0
    /// Open commits with a bound (a refresh sent, its answer not yet read).
    private var bounded = 0
    private var held: Int32?
    private let queue = DispatchQueue(label: "oidc.signals")
    /// The signal handlers, once installed (for the process's life).
    private var sources: [SignalSource.Registration] = []

    /// Installs the shield for this process, once: for the commands that may refresh.
    static func install() { shared.installOnce() }

    private func installOnce() {
        lock.withLock {
            guard sources.isEmpty else { return }
            for number in Self.signals {
                sources.append(SignalSource.activate(number, queue: queue) { [self] in received(number) })
            }
        }
        RefreshCommit.install(self)
    }

    func enter(holdingAtMost bound: Duration?) {
        lock.withLock {
            if bound == nil { depth += 1 } else { bounded += 1 }
        }
        #if DEBUG
        // Debug builds only, for the test that a signal during the save is held: a save this much slower.
        if bound == nil, let milliseconds = ProcessInfo.processInfo.environment["OIDC_TEST_SLOW_SAVE_MS"].flatMap(UInt32.init) {
            usleep(min(milliseconds, 10_000) * 1000)
        }
        #endif
    }

    func leave(holdingAtMost bound: Duration?) {
        let pending = lock.withLock { () -> Int32? in
            if bound == nil { depth -= 1 } else { bounded -= 1 }
            return depth == 0 && bounded == 0 ? held : nil
        }
        if let pending { Self.terminate(pending) }
    }

    private func received(_ number: Int32) {
        let now = lock.withLock { () -> Bool in
            guard depth > 0 || bounded > 0 else { return true }
            held = held ?? number
            return false
        }
        if now { Self.terminate(number) }
        // Held while an answer is on its way: for the bound at most, unless the save has begun by then.
        let (seconds, attoseconds) = RefreshCommit.sendingBound.components
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))) { [self] in
            let expired = lock.withLock { depth == 0 ? held : nil }
            if let expired { Self.terminate(expired) }
        }
    }

    /// Ends the process by `number`, as its default action would (the exit status a shell or a
    /// parent process expects from it).
    private static func terminate(_ number: Int32) -> Never {
        signal(number, SIG_DFL)
        // Dispatch's threads keep signals blocked: unblocked on this one.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        _exit(128 + number)
    }
}
