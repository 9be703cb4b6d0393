import Foundation
import Testing

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
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Duration = .seconds(60),
        executable: URL? = nil, started: (@Sendable (Process) -> Void)? = nil
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

    private static func runBlocking(
        _ arguments: [String], stdin: String?, environment: [String: String], timeout: Duration, executable: URL,
        started: (@Sendable (Process) -> Void)?
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe(), error = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input
        try process.run()
        started?(process)
        // Read both pipes concurrently so a full pipe never blocks the child.
        let group = DispatchGroup()
        let outData = Collected(), errData = Collected()
        for (pipe, sink) in [(output, outData), (error, errData)] {
            group.enter()
            Thread.detachNewThread {
                sink.set(pipe.fileHandleForReading.readDataToEndOfFile())
                group.leave()
            }
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let seconds = Double(timeout.components.seconds)
        if group.wait(timeout: .now() + seconds) == .timedOut {
            process.terminate()
            Issue.record("oidc \(arguments.joined(separator: " ")) did not finish within \(seconds) s")
        }
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData.get(), as: UTF8.self),
            stderr: String(decoding: errData.get(), as: UTF8.self)
        )
    }
}

/// What one reader thread collected from a pipe.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}
