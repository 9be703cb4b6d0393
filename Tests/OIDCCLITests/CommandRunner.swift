import Foundation
import OIDCTesting
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
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Duration = .seconds(60),
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
        let input = try PipePair(), output = try PipePair(), error = try PipePair()
        let fullEnvironment = environment.isEmpty ? ProcessInfo.processInfo.environment
            : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pid = try ChildProcess.spawn(
            executable.path, arguments: arguments, environment: fullEnvironment,
            stdin: input.read, stdout: output.write, stderr: error.write
        )
        input.closeRead()
        output.closeWrite()
        error.closeWrite()
        started?(RunningCommand(pid: pid))
        // Read both pipes concurrently so a full pipe never blocks the child.
        let group = DispatchGroup()
        let outData = Collected(), errData = Collected()
        for (pipe, sink) in [(output, outData), (error, errData)] {
            group.enter()
            Thread.detachNewThread {
                sink.set(pipe.readToEnd())
                pipe.closeRead()
                group.leave()
            }
        }
        if let stdin { input.writeAll(Array(stdin.utf8)) }
        input.closeWrite()
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

struct SpawnFailure: Error, CustomStringConvertible {
    var description: String
}

/// A pipe whose ends are closed on exec (the child gets its copies through dup2 only).
private final class PipePair: @unchecked Sendable {
    let read: Int32
    let write: Int32
    private let lock = NSLock()
    private var readOpen = true
    private var writeOpen = true

    init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SpawnFailure(description: "pipe failed: errno \(errno)") }
        read = ends[0]
        write = ends[1]
        _ = fcntl(read, F_SETFD, FD_CLOEXEC)
        _ = fcntl(write, F_SETFD, FD_CLOEXEC)
    }

    func closeRead() { lock.withLock { if readOpen { readOpen = false; close(read) } } }
    func closeWrite() { lock.withLock { if writeOpen { writeOpen = false; close(write) } } }

    func readToEnd() -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(read, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 || errno != EINTR {
                return data
            }
        }
    }

    func writeAll(_ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { systemWrite(write, $0.baseAddress, $0.count) }
            if count > 0 {
                written += count
            } else if errno != EINTR {
                return
            }
        }
    }
}

/// What one reader thread collected from a pipe.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}

#if canImport(Glibc)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { Glibc.read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
#else
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { Darwin.read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
#endif
