import Foundation
public import OIDC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tests' one raw HTTP/1.1 client, over a blocking loopback socket (IPv4 or IPv6): requests
/// exactly as written, no redirects followed, no cookies, `Connection: close`. It drives the test
/// provider as a browser would (``get(_:headers:)``, ``postForm(_:_:headers:)``), and sends what a
/// well-behaved client never sends (a foreign `Host`, another method, HTTP/1.0, a body on GET, a
/// silent connection: ``exchange(_:_:_:)``). Blocking calls run on their own thread, never on the
/// cooperative pool; every socket wait is bounded by a timeout.
public enum RawHTTPClient {
    /// What went wrong, in words.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// One header field.
    public struct Header: Sendable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// One HTTP/1.1 response, as received.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [Header]
        /// The body: everything after the head as received until the server closed, or, from the
        /// URL-taking calls, the `Content-Length` bytes of it.
        public var body: [UInt8]

        /// The value of the header field with this name; `nil` when absent. Repeated, its values
        /// joined by `, ` (RFC 9110 §5.3), so a test that expects one value sees the repetition.
        public func header(_ name: String) -> String? {
            let values = headers(name)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }

        /// Every value of the header fields with this name, in order.
        public func headers(_ name: String) -> [String] {
            headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        public func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw Failure(description: "The body is not a JSON object: \(text)")
            }
            return object
        }

        public var location: String? { header("Location") }

        /// The query parameters of the `Location` header, decoded; duplicates are an error.
        public func redirectParameters() throws -> [String: String] {
            guard let location else { throw Failure(description: "No Location header (status \(status))") }
            let query = location.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            var result: [String: String] = [:]
            for parameter in try FormEncoding.decode(query) { result[parameter.name] = parameter.value }
            return result
        }
    }

    /// The socket timeout of the URL-taking calls (the test provider's answers), in seconds: 30, scaled.
    public static let timeout = TestTime.scaled(30)
    /// The socket timeout of the raw calls (a loopback listener's answers), in seconds: 10, scaled.
    public static let rawTimeout = TestTime.scaled(10)

    // MARK: Requests to a URL

    public static func get(_ url: String, headers: [Header] = []) async throws -> Response {
        try await send("GET", url, headers: headers)
    }

    /// A form POST; the pairs are encoded in order.
    public static func postForm(_ url: String, _ form: KeyValuePairs<String, String>, headers: [Header] = []) async throws -> Response {
        let body = FormEncoding.encode(form.map { OAuthParameter($0.key, $0.value) })
        return try await send(
            "POST", url, headers: headers + [Header(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8)
        )
    }

    /// `method` of `url` (`http`, with a port) with `headers` and `body`; the body of the answer
    /// is its `Content-Length` bytes.
    public static func send(_ method: String, _ url: String, headers: [Header] = [], body: [UInt8] = []) async throws -> Response {
        let target = try Target(url)
        var head = "\(method) \(target.requestTarget) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nConnection: close\r\n"
        for header in headers { head += "\(header.name): \(header.value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        let raw = try await onThread {
            let socket = try Socket(target.host, target.port, timeout: timeout)
            defer { socket.close() }
            try socket.send(bytes)
            return try socket.readUntilClosed()
        }
        return try parse(raw, versions: "HTTP/1.", framedByContentLength: true)
    }

    // MARK: Raw exchanges

    /// `METHOD target HTTP/1.1` with `Host` (unless `host` is nil), the extra lines, and an empty line.
    public static func request(
        _ method: String, _ target: String, host: String?, version: String = "HTTP/1.1", extra: [String] = []
    ) -> [UInt8] {
        var text = "\(method) \(target) \(version)\r\n"
        if let host { text += "Host: \(host)\r\n" }
        for line in extra { text += line + "\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// Sends `bytes` to `address:port` and reads until the server closes; the answer must be HTTP/1.1.
    public static func exchange(_ address: String, _ port: Int, _ bytes: [UInt8]) async throws -> Response {
        try parse(try await rawExchange(address, port, bytes), versions: "HTTP/1.1", framedByContentLength: false)
    }

    /// Sends `bytes` and returns every byte received until the server closed (none when it closed at once).
    public static func rawExchange(_ address: String, _ port: Int, _ bytes: [UInt8]) async throws -> [UInt8] {
        try await onThread {
            let socket = try Socket(address, port)
            defer { socket.close() }
            try socket.send(bytes)
            return try socket.readUntilClosed()
        }
    }

    /// A GET (or other method) of `target` with the `Host` the listener expects.
    public static func send(
        _ method: String = "GET", _ target: String, to listener: LoopbackRedirectListener, address: String = "127.0.0.1",
        host: String? = nil, extra: [String] = []
    ) async throws -> Response {
        let authority = host ?? (address.contains(":") ? "[\(address)]:\(listener.port)" : "\(address):\(listener.port)")
        return try await exchange(address, listener.port, request(method, target, host: authority, extra: extra))
    }

    /// Whether a TCP connection to `address:port` is accepted.
    public static func canConnect(_ address: String, _ port: Int) async -> Bool {
        (try? await onThread {
            let socket = try Socket(address, port)
            socket.close()
            return true
        }) ?? false
    }

    /// Whether a TCP connection to `host:port` is accepted.
    public static func canConnect(host: String, port: Int) async -> Bool {
        await canConnect(host, port)
    }

    /// Connects, sends nothing, and returns what arrived before the server closed, with the time it took.
    public static func silentConnection(_ address: String, _ port: Int) async throws -> (bytes: [UInt8], seconds: Double) {
        try await onThread {
            let socket = try Socket(address, port)
            defer { socket.close() }
            let start = Date()
            let bytes = try socket.readUntilClosed()
            return (bytes, Date().timeIntervalSince(start))
        }
    }

    /// Opens `count` connections that send nothing and keeps them open while `body` runs.
    public static func withSilentConnections<T>(
        _ count: Int, _ address: String, _ port: Int, _ body: () async throws -> T
    ) async throws -> T {
        let sockets = try await onThread { try (0..<count).map { _ in try Socket(address, port) } }
        defer { for socket in sockets { socket.close() } }
        return try await body()
    }

    /// One connection whose receive buffer is `receiveBuffer` bytes (so its window stays small).
    public static func connection(_ address: String, _ port: Int, receiveBuffer: Int) async throws -> Socket {
        try await onThread { try Socket(address, port, receiveBuffer: receiveBuffer) }
    }

    /// Opens `count` connections, each of which sends `bytes` (an unfinished request head) and then
    /// nothing more; in the order given, so the first is the oldest.
    public static func openSlowHeads(_ count: Int, _ address: String, _ port: Int, sending bytes: [UInt8]) async throws -> [Socket] {
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
    public static func trickle(_ address: String, _ port: Int, head: [UInt8], every interval: Duration, for limit: Duration) async throws -> Double? {
        try await onThread {
            let socket = try Socket(address, port)
            defer { socket.close() }
            let start = ContinuousClock.now
            try socket.send(head)
            while ContinuousClock.now - start < limit {
                // The interval is the point here: the server must see a connection that is never idle.
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
    public static let canBindIPv6Loopback: Bool = {
        #if canImport(Glibc)
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET6, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { closeDescriptor(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        guard inet_pton(AF_INET6, "::1", &address.sin6_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }()

    // MARK: Plumbing

    private struct Target {
        var host: String
        var port: Int
        var requestTarget: String
        var hostHeader: String

        init(_ url: String) throws {
            guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host,
                let port = components.port
            else { throw Failure(description: "Not an http URL with a port: \(url)") }
            self.host = host
            self.port = port
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            requestTarget = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
            hostHeader = "\(host):\(port)"
        }
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// One blocking socket with send and receive timeouts.
    public final class Socket: @unchecked Sendable {
        private let fd: Int32

        init(_ host: String, _ port: Int, timeout: Int = RawHTTPClient.rawTimeout, receiveBuffer: Int? = nil) throws {
            let family = host.contains(":") ? AF_INET6 : AF_INET
            #if canImport(Glibc)
            fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            #else
            fd = socket(family, SOCK_STREAM, 0)
            #endif
            guard fd >= 0 else { throw Failure(description: "socket() failed") }
            var time = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            // Before connect: the window it offers is set from it.
            if var size = receiveBuffer.map(Int32.init) { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
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

        public func close() { closeDescriptor(fd) }

        /// Whether the server has closed the connection (or reset it), without waiting.
        public var isClosedByPeer: Bool {
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if n == 0 { return true }
            if n > 0 { return false }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }

        public func send(_ bytes: [UInt8]) throws {
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
                sent += n
            }
        }

        /// Sends copies of `bytes`, at most `count`, for as long as the kernel takes them within
        /// `patience` of waiting (a peer that stopped reading stops it); returns how many whole copies went.
        public func sendRepeatedly(_ bytes: [UInt8], count: Int, patience: Duration) throws -> Int {
            let all = Array((0..<count).map { _ in bytes }.joined())
            var sent = 0
            let milliseconds = Int32(patience.components.seconds * 1000 + patience.components.attoseconds / 1_000_000_000_000_000)
            while sent < all.count {
                let n = all[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, dontWait: true) }
                if n > 0 {
                    sent += n
                    continue
                }
                guard errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure(description: "send() failed: errno \(errno)") }
                var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&waiting, 1, milliseconds) <= 0 { break }
            }
            return sent / bytes.count
        }

        /// Reads until `count` responses' status lines (`HTTP/1.1 `) have arrived; returns how many
        /// carried `status`. Throws at the socket's receive timeout or when the peer closes first.
        public func readResponses(_ count: Int, status: Int) throws -> Int {
            let line = Array("HTTP/1.1 ".utf8)
            let wanted = Array("HTTP/1.1 \(status) ".utf8)
            var seen = 0, matching = 0
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while seen < count {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw Failure(description: "the server closed or stalled after \(seen) of \(count) responses (errno \(errno))") }
                pending += buffer[..<n]
                // A status line is counted once the bytes of `wanted` have all arrived (fewer stay pending).
                var index = 0
                while index + wanted.count <= pending.count {
                    if pending[index] == line[0], pending[index..<(index + line.count)].elementsEqual(line) {
                        seen += 1
                        if pending[index..<(index + wanted.count)].elementsEqual(wanted) { matching += 1 }
                        index += line.count
                    } else {
                        index += 1
                    }
                }
                pending.removeFirst(index)
            }
            return matching
        }

        /// Everything received until the peer closes (a reset after some bytes counts as a close),
        /// at most 64 MiB.
        public func readUntilClosed() throws -> [UInt8] {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while received.count < 64 << 20 {
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

    /// The response in `raw`; its status line must start with `versions`.
    private static func parse(_ raw: [UInt8], versions: String, framedByContentLength: Bool) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.indices.first(where: { raw[$0...].starts(with: separator) }) else {
            throw Failure(description: "No complete response head (\(raw.count) bytes received)")
        }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix(versions), let status = Int(statusLine[1]) else {
            throw Failure(description: "Bad status line: \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> Header? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return Header(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, headers: headers, body: Array(raw[(end + 4)...]))
        if framedByContentLength, let length = response.headers("Content-Length").first.flatMap({ Int($0) }) {
            guard response.body.count >= length else { throw Failure(description: "Body shorter than Content-Length") }
            response.body = Array(response.body.prefix(length))
        }
        return response
    }
}

#if canImport(Glibc)
private func closeDescriptor(_ fd: Int32) { _ = Glibc.close(fd) }
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, dontWait: Bool = false) -> Int {
    Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL) | (dontWait ? Int32(MSG_DONTWAIT) : 0))
}
#else
private func closeDescriptor(_ fd: Int32) { _ = Darwin.close(fd) }
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, dontWait: Bool = false) -> Int {
    Darwin.send(fd, buffer, count, dontWait ? MSG_DONTWAIT : 0)
}
#endif
