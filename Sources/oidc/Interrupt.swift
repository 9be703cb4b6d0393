import ArgumentParser
import Foundation
import OIDC

/// Ctrl-C for commands that wait on a person (login, demo): SIGINT cancels the work, which closes
/// what it opened (the loopback listener, connections), and the command exits 130.
enum Interrupt {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let interrupted = Flag()
        // Listening before the work starts: a Ctrl-C at any moment of it cancels it.
        let source = SignalSource.activate(SIGINT, queue: DispatchQueue(label: "oidc.interrupt")) { interrupted.set() }
        let task = Task { try await body() }
        interrupted.onSet { task.cancel() }
        defer { source.cancel() }
        let result = await task.result
        // Interrupted, but the work finished first (the login is stored): report what happened.
        if interrupted.value, case .failure = result {
            Console.error("oidc: interrupted; nothing was stored")
            throw ExitCode(ExitCodes.interrupted)
        }
        return try result.get()
    }

    /// Set once by the signal's handler; runs the action given by ``onSet(_:)`` then, or at once
    /// when it was set before the action was given.
    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var isSet = false
        private var action: (@Sendable () -> Void)?
        func set() {
            let run = lock.withLock { () -> (@Sendable () -> Void)? in
                isSet = true
                return action
            }
            run?()
        }
        func onSet(_ body: @escaping @Sendable () -> Void) {
            let now = lock.withLock { () -> Bool in
                action = body
                return isSet
            }
            if now { body() }
        }
        var value: Bool { lock.withLock { isSet } }
    }
}
