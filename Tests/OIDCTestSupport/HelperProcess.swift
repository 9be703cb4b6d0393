public import Foundation
import OIDCTesting
import Synchronization

/// A running helper executable of the tests (`oidc-store-writer`, `oidc-postgres-worker`): lines
/// from its standard output, a line to its standard input, its exit. Its pipes are read on threads
/// of their own: a blocking read on Dispatch's global queues would hold a thread Swift's
/// concurrency needs (on Linux they share one pool), and sixteen helpers starve every task of the
/// process. Every wait is bounded: the helper is killed after `watchdog`.
///
/// Started with posix_spawn (OIDCTesting's `ChildProcess`), not Foundation's `Process`, which can
/// crash a test process with many descriptors open.
public final class HelperProcess: Sendable {
    /// How a helper ended.
    public enum Status: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32), signalled(Int32), timedOut

        public var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            case .timedOut: "timed out"
            }
        }
    }

    /// The executable `name`, built beside the test bundle (as `oidc` is: OIDCCLITests/CommandRunner.swift).
    public static func url(of name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    public let pid: Int32
    private let child: ChildProcess
    private let watchdog: Duration
    private let lines: AsyncStream<String>
    private let exits: AsyncStream<Status>
    private let errorOutput = Mutex("")

    /// What the helper wrote to its standard error (complete once it has exited).
    public var standardError: String { errorOutput.withLock { $0 } }

    /// Starts the helper `name` with `arguments`, the test's environment plus `environment`.
    public convenience init(
        _ name: String, _ arguments: [String], environment: [String: String] = [:], writesInput: Bool = false, watchdog: Duration
    ) throws {
        try self.init(executable: Self.url(of: name).path, arguments, environment: environment, writesInput: writesInput, watchdog: watchdog)
    }

    /// Starts the program at `executable` (a test peer's interpreter, say) with `arguments`, the
    /// test's environment plus `environment`.
    public init(
        executable: String, _ arguments: [String], environment: [String: String] = [:], writesInput: Bool = false, watchdog: Duration
    ) throws {
        let child = try ChildProcess(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            writesInput: writesInput)
        self.child = child
        self.watchdog = watchdog
        pid = child.pid
        let (exits, exited) = AsyncStream.makeStream(of: Status.self)
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        self.exits = exits
        Thread.detachNewThread {
            var pending = ""
            // Ends at end of file, when the helper exits (it is killed at the latest by a watchdog).
            for _ in 0..<100_000 {
                let chunk = child.readOutput()
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: "\n") {
                    line.yield(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
            line.finish()
        }
        Thread.detachNewThread {
            switch child.waitForTermination() {
            case .exited(let code): exited.yield(.exited(code))
            case .signalled(let signal): exited.yield(.signalled(signal))
            }
            exited.finish()
        }
        Thread.detachNewThread { [self] in
            let text = child.standardError
            errorOutput.withLock { $0 = text }
        }
    }

    /// Writes `line` and a newline to the helper's standard input (started with `writesInput`).
    public func send(_ line: String) { child.writeInput(line + "\n") }

    /// Sends SIGKILL.
    public func kill() { sendKill(pid) }

    /// The next line the helper prints (`nil` when it exits first or the watchdog kills it).
    public func nextLine() async -> String? {
        await guarded { for await line in lines { return line }; return nil }
    }

    /// Whether the helper printed `expected` (`false` if it exited first or the watchdog killed it).
    public func waitForLine(_ expected: String) async -> Bool {
        await guarded { for await line in lines where line == expected { return true }; return false }
    }

    /// How the helper ended; killed by the watchdog if it takes longer.
    public func exitStatus() async -> Status {
        await guarded { for await status in exits { return status }; return .timedOut }
    }

    /// `body`, with the helper killed if it takes longer than the watchdog.
    private func guarded<T>(_ body: () async -> T) async -> T {
        let watchdog = Task { [pid, limit = self.watchdog] in
            try await Task.sleep(for: limit)
            sendKill(pid)
        }
        defer { watchdog.cancel() }
        return await body()
    }
}

private func sendKill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}
