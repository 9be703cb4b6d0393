import ArgumentParser
import Foundation
import OIDC

/// Ctrl-C for commands that wait on a person (login, demo): SIGINT cancels the work, which closes
/// what it opened (the loopback listener, connections), and the command exits 130.
enum Interrupt {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let interrupted = Flag()
        let task = Task { try await body() }
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "oidc.interrupt"))
        source.setEventHandler {
            interrupted.set()
            task.cancel()
        }
        source.resume()
        defer {
            source.cancel()
            signal(SIGINT, SIG_DFL)
        }
        let result = await task.result
        // Interrupted, but the work finished first (the login is stored): report what happened.
        if interrupted.value, case .failure = result {
            Console.error("oidc: interrupted; nothing was stored")
            throw ExitCode(ExitCodes.interrupted)
        }
        return try result.get()
    }

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var isSet = false
        func set() { lock.withLock { isSet = true } }
        var value: Bool { lock.withLock { isSet } }
    }
}
