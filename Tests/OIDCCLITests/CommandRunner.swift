import Foundation
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the built `oidc` binary as a user's shell would: arguments, optional standard input, and a
/// bounded wait; returns stdout, stderr and the exit code.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum OIDCBinary {
    /// The `oidc` built beside this test bundle (SwiftPM puts products and test bundles in one folder),
    /// or `$OIDC_BINARY`.
    static var url: URL {
        if let override = ProcessInfo.processInfo.environment["OIDC_BINARY"] { return URL(fileURLWithPath: override) }
        return built
    }

    /// The `oidc` of this build, beside the test helpers.
    static var built: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // Swift Testing may run from inside the .xctest bundle on some platforms.
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("oidc").path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("oidc")
    }

    /// Runs the command and waits on a thread of its own, never on one of Swift's cooperative pool: a
    /// blocked pool thread would starve the in-process servers (actors) other tests talk to.
    static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Duration = .scaled(.seconds(60)),
        executable: URL? = nil, started: (@Sendable (RunningCommand) -> Void)? = nil
    ) async throws -> CommandResult {
        try await withCheckedThrowingContinuation { continuation in
            // A thread of its own: Dispatch's global pool grows slowly when its threads block.
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try runBlocking(arguments, stdin: stdin, environment: environment, timeout: timeout, executable: executable ?? url, started: started)
                })
            }
        }
    }

    /// A sibling executable built with `oidc` (the test browser, the store writer).
    /// A helper executable of this build (`oidc-test-browser`, `oidc-store-writer`), wherever the
    /// `oidc` under test comes from.
    static func sibling(_ name: String) -> String { built.deletingLastPathComponent().appendingPathComponent(name).path }

    /// Spawns with `posix_spawn`, not Foundation's `Process`: on Linux, `Process.run()` reads
    /// `/proc/self/fd` with a 256-byte copy of each entry's name, which reads past glibc's buffer and
    /// crashes the test process now and then once it has more than about 1,300 descriptors open
    /// (swift-corelibs-foundation PR 5472), as a parallel run of this suite does. The child gets
    /// standard input, output and error only, an empty signal mask and default signal dispositions.
    private static func runBlocking(
        _ arguments: [String], stdin: String?, environment: [String: String], timeout: Duration, executable: URL,
        started: (@Sendable (RunningCommand) -> Void)?
    ) throws -> CommandResult {
        let input = try ChildProcess.pipePair(), output = try ChildProcess.pipePair(), errors = try ChildProcess.pipePair()
        let fullEnvironment = environment.isEmpty ? ProcessInfo.processInfo.environment
            : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pid: Int32
        do {
            pid = try ChildProcess.spawn(
                executable.path, arguments: arguments, environment: fullEnvironment,
                stdin: input.read, stdout: output.write, stderr: errors.write
            )
        } catch {
            [input.read, input.write, output.read, output.write, errors.read, errors.write].forEach { close($0) }
            throw error
        }
        [input.read, output.write, errors.write].forEach { close($0) }
        started?(RunningCommand(pid: pid))
        // Read both pipes concurrently so a full pipe never blocks the child.
        let group = DispatchGroup()
        let outData = Collected(), errData = Collected()
        for (fd, sink) in [(output.read, outData), (errors.read, errData)] {
            group.enter()
            Thread.detachNewThread {
                sink.set(Data(ChildProcess.readToEnd(fd)))
                close(fd)
                group.leave()
            }
        }
        if let stdin { ChildProcess.writeAll(input.write, Array(stdin.utf8)) }
        close(input.write)
        let seconds = Double(timeout.components.seconds)
        if group.wait(timeout: .now() + seconds) == .timedOut {
            kill(pid, SIGTERM)
            Issue.record("oidc \(arguments.joined(separator: " ")) did not finish within \(seconds) s")
            if group.wait(timeout: .now() + 5) == .timedOut { kill(pid, SIGKILL) }
            group.wait()
        }
        return CommandResult(
            status: ChildProcess.waitForExit(pid),
            stdout: String(decoding: outData.get(), as: UTF8.self),
            stderr: String(decoding: errData.get(), as: UTF8.self)
        )
    }

}

/// A command started by ``OIDCBinary/run(_:stdin:environment:timeout:executable:started:)``.
struct RunningCommand: Sendable {
    let pid: pid_t

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    func interrupt() { kill(pid, SIGINT) }

    /// Sends SIGTERM, as `kill` and service managers do.
    func terminate() { kill(pid, SIGTERM) }
}

/// What one reader thread collected from a pipe.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}

/// Blocks the calling thread (one of its own, such as a `started:` callback's: never one of Swift's
/// cooperative pool) until `condition` holds, checking every 10 ms, for at most `limit`.
func awaitEvent(limit: Duration = .scaled(.seconds(30)), _ condition: @escaping @Sendable () async -> Bool) {
    let done = DispatchSemaphore(value: 0)
    Task {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while clock.now < deadline, !(await condition()) { try? await Task.sleep(for: .milliseconds(10)) }
        done.signal()
    }
    done.wait()
}
