import Foundation
import OIDC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A raw HTTP/1.1 client over a blocking loopback socket (IPv4 or IPv6), for what a well-behaved
/// client never sends: a foreign `Host`, another method, HTTP/1.0, a body on GET, a silent
/// connection. Blocking calls run on their own thread; every socket wait is bounded by a timeout.
enum LoopbackTestClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Response: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        /// Everything after the head, as received until the server closed.
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        func headers(_ name: String) -> [String] {
            headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        }

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static let timeout = 10

    /// `METHOD target HTTP/1.1` with `Host` (unless `host` is nil), the extra lines, and an empty line.
    static func request(
        _ method: String, _ target: String, host: String?, version: String = "HTTP/1.1", extra: [String] = []
    ) -> [UInt8] {
        var text = "\(method) \(target) \(version)\r\n"
        if let host { text += "Host: \(host)\r\n" }
        for line in extra { text += line + "\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// Sends `bytes` to `address:port` and reads until the server closes.
    static func exchange(_ address: String, _ port: Int, _ bytes: [UInt8]) async throws -> Response {
        try parse(try await rawExchange(address, port, bytes))
    }

    /// Sends `bytes` and returns every byte received until the server closed (none when it closed at once).
    static func rawExchange(_ address: String, _ port: Int, _ bytes: [UInt8]) async throws -> [UInt8] {
        try await onThread {
            let socket = try Socket(address, port)
            defer { socket.close() }
            try socket.send(bytes)
            return try socket.readUntilClosed()
        }
    }

    /// A GET (or other method) of `target` with the `Host` the listener expects.
    static func send(
        _ method: String = "GET", _ target: String, to listener: LoopbackRedirectListener, address: String = "127.0.0.1",
        host: String? = nil, extra: [String] = []
    ) async throws -> Response {
        let authority = host ?? (address.contains(":") ? "[\(address)]:\(listener.port)" : "\(address):\(listener.port)")
        return try await exchange(address, listener.port, request(method, target, host: authority, extra: extra))
    }

    /// Whether a TCP connection to `address:port` is accepted.
    static func canConnect(_ address: String, _ port: Int) async -> Bool {
        (try? await onThread {
            let socket = try Socket(address, port)
            socket.close()
            return true
        }) ?? false
    }

    /// Connects, sends nothing, and returns what arrived before the server closed, with the time it took.
    static func silentConnection(_ address: String, _ port: Int) async throws -> (bytes: [UInt8], seconds: Double) {
        try await onThread {
            let socket = try Socket(address, port)
            defer { socket.close() }
            let start = Date()
            let bytes = try socket.readUntilClosed()
            return (bytes, Date().timeIntervalSince(start))
        }
    }

    /// Opens `count` connections that send nothing and keeps them open while `body` runs.
    static func withSilentConnections<T>(
        _ count: Int, _ address: String, _ port: Int, _ body: () async throws -> T
    ) async throws -> T {
        let sockets = try await onThread { try (0..<count).map { _ in try Socket(address, port) } }
        defer { for socket in sockets { socket.close() } }
        return try await body()
    }

    /// Opens `count` connections, each of which sends `bytes` (an unfinished request head) and then
    /// nothing more; in the order given, so the first is the oldest.
    static func openSlowHeads(_ count: Int, _ address: String, _ port: Int, sending bytes: [UInt8]) async throws -> [Socket] {
        try await onThread {
            try (0..<count).map { _ in
                let socket = try Socket(address, port)
                try socket.send(bytes)
                return socket
            }
        }
    }

    /// Connects, sends `head` (an unfinished request head), then one more header line every
    /// `interval` (so the connection is never idle) until the server closes it or `limit` passes.
    /// Returns the seconds from connecting to the close, or `nil` when it stayed open.
    static func trickle(_ address: String, _ port: Int, head: [UInt8], every interval: Duration, for limit: Duration) async throws -> Double? {
        try await onThread {
            let socket = try Socket(address, port)
            defer { socket.close() }
            let start = ContinuousClock.now
            try socket.send(head)
            while ContinuousClock.now - start < limit {
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
                if socket.isClosedByPeer || (try? socket.send(Array("X-Pad: a\r\n".utf8))) == nil {
                    let elapsed = ContinuousClock.now - start
                    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                }
            }
            return nil
        }
    }

    /// Whether ::1 can be bound here (some containers have no IPv6).
    static let canBindIPv6Loopback: Bool = {
        #if canImport(Glibc)
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET6, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        guard inet_pton(AF_INET6, "::1", &address.sin6_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }()

    // MARK: Plumbing

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// One blocking socket with send and receive timeouts.
    final class Socket: @unchecked Sendable {
        private let fd: Int32

        init(_ host: String, _ port: Int) throws {
            let family = host.contains(":") ? AF_INET6 : AF_INET
            #if canImport(Glibc)
            fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            #else
            fd = socket(family, SOCK_STREAM, 0)
            #endif
            guard fd >= 0 else { throw Failure(description: "socket() failed") }
            var time = timeval(tv_sec: LoopbackTestClient.timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            let result: Int32
            if family == AF_INET6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = in_port_t(UInt16(port)).bigEndian
                guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw failure("not an IPv6 literal: \(host)") }
                result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                }
            } else {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port)).bigEndian
                guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw failure("not an IPv4 literal: \(host)") }
                result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            guard result == 0 else { throw failure("connect() to \(host):\(port) failed: errno \(errno)") }
        }

        private func failure(_ text: String) -> Failure {
            closeDescriptor(fd)
            return Failure(description: text)
        }

        func close() { closeDescriptor(fd) }

        /// Whether the server has closed the connection (or reset it), without waiting.
        var isClosedByPeer: Bool {
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if n == 0 { return true }
            if n > 0 { return false }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }

        func send(_ bytes: [UInt8]) throws {
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
                sent += n
            }
        }

        /// Everything received until the peer closes (a reset after some bytes counts as a close).
        func readUntilClosed() throws -> [UInt8] {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while received.count < 1 << 20 {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n == 0 { break }
                guard n > 0 else {
                    if errno == ECONNRESET { break }
                    throw Failure(description: "recv() failed: errno \(errno) after \(received.count) bytes")
                }
                received.append(contentsOf: buffer[..<n])
            }
            return received
        }
    }

    private static func parse(_ raw: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.indices.first(where: { raw[$0...].starts(with: separator) }) else {
            throw Failure(description: "No complete response head (\(raw.count) bytes received)")
        }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else {
            throw Failure(description: "Bad status line: \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Response(status: status, headers: headers, body: Array(raw[(end + 4)...]))
    }
}

#if canImport(Glibc)
private func closeDescriptor(_ fd: Int32) { _ = Glibc.close(fd) }
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
}
#else
private func closeDescriptor(_ fd: Int32) { _ = Darwin.close(fd) }
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    Darwin.send(fd, buffer, count, 0)
}
#endif
