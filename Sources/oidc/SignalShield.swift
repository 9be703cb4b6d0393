import Foundation
import OIDC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Holds SIGINT, SIGTERM and SIGHUP back while a refresh saves its new tokens (the library's
/// `RefreshCommit`: from the provider's answer, which spends the old refresh token, to the durable
/// save of its replacement). A signal outside that span ends the process at once, as the signal's
/// default action does; one inside it ends the process as soon as the save is done. Ctrl-C in a
/// terminal, `timeout`, a CI job's limit or kubectl's cancelled context then never leave the spent
/// refresh token in the store. SIGKILL cannot be held back; it needs the milliseconds of the save.
final class SignalShield: RefreshCommit.Shield, @unchecked Sendable {
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private static let shared = SignalShield()

    private let lock = NSLock()
    private var depth = 0
    private var held: Int32?
    /// The signal sources, once installed (kept alive for the process's life).
    private var sources: [any DispatchSourceSignal] = []

    /// Installs the shield for this process, once: for the commands that may refresh.
    static func install() { shared.installOnce() }

    private func installOnce() {
        lock.withLock {
            guard sources.isEmpty else { return }
            let queue = DispatchQueue(label: "oidc.signals")
            for number in Self.signals {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [self] in received(number) }
                source.resume()
                sources.append(source)
            }
        }
        RefreshCommit.install(self)
    }

    func enter() {
        lock.withLock { depth += 1 }
        #if DEBUG
        // Debug builds only, for the test that a signal during the save is held: a save this much slower.
        if let milliseconds = ProcessInfo.processInfo.environment["OIDC_TEST_SLOW_SAVE_MS"].flatMap(UInt32.init) {
            usleep(min(milliseconds, 10_000) * 1000)
        }
        #endif
    }

    func leave() {
        let pending = lock.withLock { () -> Int32? in
            depth -= 1
            return depth == 0 ? held : nil
        }
        if let pending { Self.terminate(pending) }
    }

    private func received(_ number: Int32) {
        let now = lock.withLock { () -> Bool in
            guard depth > 0 else { return true }
            held = held ?? number
            return false
        }
        if now { Self.terminate(number) }
    }

    /// Ends the process by `number`, as its default action would (the exit status a shell or a
    /// parent process expects from it).
    private static func terminate(_ number: Int32) -> Never {
        signal(number, SIG_DFL)
        // Dispatch's signal sources keep the signal blocked on its threads: unblocked on this one.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        _exit(128 + number)
    }
}
