#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import ArgumentParser
import Dispatch
import Foundation
import Logging
import OIDC

/// What a command-line server does around its routes, as `oidc resource-server` does it: the base
/// URL on stdout's first line once listening, one line on stderr per decision (the middleware's
/// log), SIGTERM stops with 0 and SIGINT with 130 (also during the start), usage mistakes and a
/// port in use exit 2, an issuer that cannot be reached exits 5.
public enum CommandLineServer {
    /// Parses `Flags`, then runs `serve` until SIGINT or SIGTERM; never returns.
    ///
    /// `serve` gets the flags, the host and port to bind (a free port when `--port 0`), the base
    /// URL, a logger that writes `NAME: message` on stderr, and `listening`, to call once bound.
    public static func main(
        _ name: String,
        serve: @escaping @Sendable (ResourceServerFlags, _ base: URL, _ port: Int, _ logger: Logger, _ listening: @escaping @Sendable () -> Void) async throws -> Void
    ) async -> Never {
        let flags: ResourceServerFlags
        do { flags = try Program.parse().flags } catch {
            let code = Program.exitCode(for: error)
            let message = Program.fullMessage(for: error)
            if code == .success {
                print(message)
                exit(0)
            }
            FileHandle.standardError.write(Data((message + "\n").utf8))
            exit(2)
        }
        let signals = SignalStream([SIGINT, SIGTERM])
        var logger = Logger(label: name) { _ in PrefixedStderrHandler(name: name) }
        logger.logLevel = .debug
        let started = Task {
            let port = flags.port == 0 ? try freePort(host: flags.host) : flags.port
            let base = URL(string: "http://\(flags.host.contains(":") ? "[\(flags.host)]" : flags.host):\(port)")!
            try await serve(flags, base, port, logger) {
                // Written at once, also when stdout is a pipe or a file.
                FileHandle.standardOutput.write(Data((base.absoluteString + "\n").utf8))
            }
        }
        let ended: Int32? = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await signals.next() }
            group.addTask {
                _ = await started.result
                return nil
            }
            let first = await group.next() ?? nil
            // The group waits for both: the server's task must end too (a graceful stop).
            started.cancel()
            group.cancelAll()
            return first
        }
        let result = await started.result
        if let ended {
            FileHandle.standardError.write(Data("\(name): resource server stopped\n".utf8))
            exit(ended == SIGINT ? 130 : 0)
        }
        guard case .failure(let error) = result else { exit(0) }
        FileHandle.standardError.write(Data("\(name): error: \(describe(error, port: flags.port, host: flags.host))\n".utf8))
        exit(exitCode(for: error))
    }

    static func exitCode(for error: any Error) -> Int32 {
        if error is ValidationError || isAddressInUse(error) { return 2 }
        guard let error = error as? OIDCError else { return 1 }
        // oidc's exit codes (docs/cli.md).
        switch error.category {
        case .configuration: return 2
        case .provider, .security: return 4
        case .transient: return 5
        case .transport: return 6
        case .storage: return 7
        case .cancelled: return 3
        case .internal: return 1
        }
    }

    static func describe(_ error: any Error, port: Int, host: String) -> String {
        if isAddressInUse(error) { return "\(host):\(port) is in use: give another --port, or 0 for any free one" }
        if let error = error as? ValidationError { return error.message }
        return String(describing: error)
    }

    static func isAddressInUse(_ error: any Error) -> Bool {
        String(describing: error).contains("Address already in use")
    }

    /// A port that was free on `host` a moment ago: the resource's URL names its port, so it is
    /// known before the server starts (a taken port fails loudly at bind).
    public static func freePort(host: String) throws -> Int {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ValidationError("no socket") }
        defer { close(fd) }
        var storage = sockaddr_storage()
        var length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &storage) { pointer -> Int? in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_family = sa_family_t(AF_INET6); $0.pointee.sin6_addr = in6addr_loopback }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_family = sa_family_t(AF_INET); $0.pointee.sin_addr.s_addr = inet_addr("127.0.0.1") }
            }
            return pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                guard bind(fd, address, length) == 0, getsockname(fd, address, &length) == 0 else { return nil }
                return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        guard let found else { throw ValidationError("no free port on \(host)") }
        return found
    }
}

/// The flags under this program's name, for `--help` and usage errors.
struct Program: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent,
            abstract: "A protected API on loopback that verifies access tokens, as oidc resource-server does.")
    }

    @OptionGroup var flags: ResourceServerFlags
}

/// SIGINT and SIGTERM as a stream, their default actions off.
final class SignalStream: @unchecked Sendable {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    func next() async -> Int32? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}

/// `NAME: message` on stderr, one line a message: the kit's (one line per decision, as
/// `oidc resource-server` prints them), and warnings and errors from anywhere.
struct PrefixedStderrHandler: LogHandler {
    let name: String
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .warning || event.source == "OIDCResourceServer" else { return }
        // Control characters (a client's bytes in a framework's message) shown as U+FFFD.
        let text = String(String.UnicodeScalarView("\(event.message)".unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "\u{FFFD}" : $0 }))
        FileHandle.standardError.write(Data("\(name): \(text)\n".utf8))
    }
}
