internal import Foundation
internal import OIDC

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A helper process of this package's tests, started with `posix_spawn` (OIDC's `Spawn`) rather
/// than Foundation's `Process`, whose `run()` on Linux crashes a test process with many descriptors
/// open now and then (swift-corelibs-foundation PR 5472), as a parallel run of the suite has. The
/// child gets standard input, output and error only, an empty signal mask and default signal
/// dispositions.
package final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    package let pid: Int32
    private let output: Int32
    /// The write end of the child's standard input, with `writesInput`.
    private let input: Int32?
    private let lock = NSLock()
    private var errorText: [UInt8] = []
    private var reaped: Termination?
    private let errorsRead = DispatchSemaphore(value: 0)

    /// Starts `path` with `arguments`, its standard output kept for ``readOutput()`` and its standard
    /// error for ``standardError``.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; this process's when `nil`.
    ///   - writesInput: whether ``writeInput(_:)`` feeds its standard input; else it reads `/dev/null`.
    package init(_ path: String, _ arguments: [String], environment: [String: String]? = nil, writesInput: Bool = false) throws {
        let source: (read: Int32, write: Int32)
        if writesInput {
            source = try Self.pipePair()
        } else {
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard null >= 0 else { throw ChildProcessError("cannot open /dev/null: errno \(errno)") }
            source = (null, -1)
        }
        let out = try Self.pipePair(), err = try Self.pipePair()
        do {
            pid = try Self.spawn(
                path, arguments: arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                stdin: source.read, stdout: out.write, stderr: err.write)
        } catch {
            [source.read, source.write, out.read, out.write, err.read, err.write].filter { $0 >= 0 }.forEach { close($0) }
            throw error
        }
        close(source.read)
        close(out.write)
        close(err.write)
        input = writesInput ? source.write : nil
        output = out.read
        Thread.detachNewThread { [self] in
            let data = Self.readToEnd(err.read)
            close(err.read)
            lock.withLock { errorText = data }
            errorsRead.signal()
        }
    }

    deinit {
        close(output)
        if let input { close(input) }
    }

    /// Writes `text` to the child's standard input (with `writesInput`); a child that has gone
    /// makes this a no-op.
    package func writeInput(_ text: String) {
        guard let input else { return }
        Self.writeAll(input, Array(text.utf8))
    }

    /// What the child wrote to standard output since the last call, waiting for at least one byte;
    /// empty once it closed its standard output.
    package func readOutput() -> String {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count >= 0 { return String(decoding: buffer[..<count], as: UTF8.self) }
            if errno != EINTR { return "" }
        }
    }

    /// Sends `number` to the child, unless it has been waited for (its process id may be another's by now).
    package func signal(_ number: Int32) {
        lock.withLock { if reaped == nil { _ = kill(pid, number) } }
    }

    /// How a child ended.
    package enum Termination: Equatable, Sendable {
        case exited(Int32), signalled(Int32)
    }

    /// Waits for the child to end (once; later calls give the same answer).
    package func waitForTermination() -> Termination {
        if let reaped = lock.withLock({ reaped }) { return reaped }
        let termination = Self.reap(pid)
        lock.withLock { reaped = termination }
        return termination
    }

    /// Waits for the child to end: its exit status, or the number of the signal that ended it (as
    /// Foundation's `Process` reports `terminationStatus`).
    package func waitForExit() -> Int32 {
        switch waitForTermination() {
        case .exited(let code), .signalled(let code): code
        }
    }

    // MARK: Waiting in async code

    /// ``readOutput()`` on a thread of its own: an async test must never block one of Swift's few
    /// cooperative threads, which the in-process servers (actors) of other tests need.
    package func output() async -> String { await Self.offPool { self.readOutput() } }

    /// ``waitForExit()`` on a thread of its own.
    package func exitStatus() async -> Int32 { await Self.offPool { self.waitForExit() } }

    /// ``waitForTermination()`` on a thread of its own.
    package func termination() async -> Termination { await Self.offPool { self.waitForTermination() } }

    /// ``standardError`` on a thread of its own.
    package func errors() async -> String { await Self.offPool { self.standardError } }

    /// Runs `body`, which blocks, on a new thread rather than on Swift's cooperative pool.
    package static func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Everything the child wrote to standard error, once it has closed it (at its exit).
    package var standardError: String {
        errorsRead.wait()
        errorsRead.signal()
        return lock.withLock { String(decoding: errorText, as: UTF8.self) }
    }

    // MARK: The system calls

    /// `posix_spawn` of `path`, with the three given descriptors as the child's 0, 1 and 2.
    package static func spawn(
        _ path: String, arguments: [String], environment: [String: String], stdin: Int32, stdout: Int32, stderr: Int32
    ) throws -> Int32 {
        do {
            return try Spawn.start(path, arguments: arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr)
        } catch {
            throw ChildProcessError(error.description)
        }
    }

    /// The exit status of `pid`, or the signal's number when a signal ended it; -1 when it cannot be waited for.
    package static func waitForExit(_ pid: Int32) -> Int32 {
        switch reap(pid) {
        case .exited(let code), .signalled(let code): code
        }
    }

    /// Waits for `pid` to end: how it ended; `.exited(-1)` when it cannot be waited for.
    private static func reap(_ pid: Int32) -> Termination {
        var status: Int32 = 0
        var result = waitpid(pid, &status, 0)
        while result < 0, errno == EINTR { result = waitpid(pid, &status, 0) }
        guard result >= 0 else { return .exited(-1) }
        return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }

    /// A pipe whose ends are closed on exec (a child gets its copies through dup2 only).
    package static func pipePair() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw ChildProcessError("pipe failed: errno \(errno)") }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        return (ends[0], ends[1])
    }

    /// Everything readable from `fd` until end of file.
    package static func readToEnd(_ fd: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 || errno != EINTR {
                return data
            }
        }
    }

    /// Writes all of `bytes` to `fd`, or as much as a reader that has gone lets through.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count > 0 { written += count } else if errno != EINTR { return }
        }
    }
}

/// A helper process that could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
