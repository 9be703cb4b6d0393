import Foundation
import OIDCTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `backchannel_logout_uri` of a test: an HTTP/1.1 listener on an ephemeral port of 127.0.0.1
/// that hands each request it receives to the test (``next(within:)``), which answers it
/// (``respond(to:status:headers:body:)``) with what the endpoint under test says. A provider's
/// back-channel logout request then arrives as an event the test waits on, with a bound, never
/// after a sleep.
///
/// One connection at a time, one request per connection (`Connection: close`); the head is
/// bounded (16 KiB), the body too (`Content-Length` required, at most `maximumBodyLength`), and
/// every socket wait has a timeout, so a silent or oversized peer gets a `400` or is dropped. The
/// blocking socket calls run on a thread of their own, never on Swift's cooperative pool.
final class LoopbackPostReceiver: Sendable {
    /// One request as received, with the connection it waits on for its answer.
    struct Request: Sendable {
        let method: String
        let target: String
        /// Header names lowercased; a repeated header's values joined by `, `.
        let headers: [String: String]
        let body: [UInt8]
        fileprivate let connection: Int32
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The port it listens on.
    let port: Int
    private let listener: Int32
    private let requests: AsyncStream<Request>
    private let isClosed = Mutex(false)
    private static let maximumHeadLength = 16 * 1024
    private static let socketTimeoutMilliseconds = Int32(TestTime.scaled(5_000))

    /// `http://127.0.0.1:PORT` + `path`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    private init(port: Int, listener: Int32, requests: AsyncStream<Request>) {
        self.port = port
        self.listener = listener
        self.requests = requests
    }

    /// Listens on 127.0.0.1, port 0 (the system picks one), and serves until ``close()``.
    static func start(maximumBodyLength: Int) throws -> LoopbackPostReceiver {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 8) == 0
            }
        }
        guard listening else {
            closeDescriptor(fd)
            throw Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        let (stream, continuation) = AsyncStream<Request>.makeStream(bufferingPolicy: .bufferingOldest(16))
        let receiver = LoopbackPostReceiver(port: Int(UInt16(bigEndian: address.sin_port)), listener: fd, requests: stream)
        Thread.detachNewThread { receiver.serve(continuation, maximumBodyLength: maximumBodyLength) }
        return receiver
    }

    /// The next request, or a ``Failure`` when none came within `timeout`.
    func next(within timeout: Duration) async throws -> Request {
        let requests = self.requests
        return try await withThrowingTaskGroup(of: Request?.self) { group in
            group.addTask {
                for await request in requests { return request }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let request = try await group.next() ?? nil else {
                throw Failure(description: "no request within \(timeout)")
            }
            return request
        }
    }

    /// Answers `request` and closes its connection (on a thread of its own: the write may block).
    func respond(to request: Request, status: Int, headers: [String: String] = [:], body: [UInt8] = []) async {
        var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Bad Request")\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + body
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                Self.write(bytes, to: request.connection)
                closeDescriptor(request.connection)
                continuation.resume()
            }
        }
    }

    /// Stops listening; the serving thread ends within its poll interval.
    func close() {
        isClosed.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit { closeDescriptor(listener) }

    private func serve(_ continuation: AsyncStream<Request>.Continuation, maximumBodyLength: Int) {
        defer { continuation.finish() }
        while !isClosed.withLock({ $0 }) {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 200) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            if connection < 0 { continue }
            switch Self.read(connection, maximumBodyLength: maximumBodyLength) {
            case .success(let parts):
                continuation.yield(Request(method: parts.method, target: parts.target, headers: parts.headers, body: parts.body, connection: connection))
            case .failure:
                Self.write(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8), to: connection)
                Self.drainAndClose(connection)
            }
        }
    }

    private typealias Parts = (method: String, target: String, headers: [String: String], body: [UInt8])

    /// The request on `connection`: its head (at most 16 KiB) and its `Content-Length` body.
    private static func read(_ connection: Int32, maximumBodyLength: Int) -> Result<Parts, Failure> {
        var received: [UInt8] = []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard let chunk = receive(connection), !chunk.isEmpty else { return .failure(Failure(description: "connection closed in the head")) }
            received += chunk
            headEnd = received.firstRange(of: separator)?.lowerBound
            if headEnd == nil && received.count > maximumHeadLength { return .failure(Failure(description: "head too long")) }
        }
        guard let headEnd, headEnd <= maximumHeadLength,
              let head = String(validating: received[..<headEnd], as: UTF8.self)
        else { return .failure(Failure(description: "head too long or not UTF-8")) }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1" else { return .failure(Failure(description: "bad request line")) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return .failure(Failure(description: "bad header line")) }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        guard let lengthText = headers["content-length"], let length = Int(lengthText), length >= 0, length <= maximumBodyLength else {
            return .failure(Failure(description: "no Content-Length, or too long a body"))
        }
        var body = Array(received[(headEnd + separator.count)...])
        while body.count < length {
            guard let chunk = receive(connection), !chunk.isEmpty else { return .failure(Failure(description: "connection closed in the body")) }
            body += chunk
        }
        guard body.count == length else { return .failure(Failure(description: "more bytes than Content-Length")) }
        return .success((String(requestLine[0]), String(requestLine[1]), headers, body))
    }

    /// Up to 4 KiB from `connection` once it is readable within the timeout; `nil` on a timeout or error.
    private static func receive(_ connection: Int32) -> [UInt8]? {
        var ready = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, socketTimeoutMilliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        return count < 0 ? nil : Array(buffer[..<count])
    }

    /// Ends the answer, then reads what the peer still sends (at most 1 MiB, each wait bounded)
    /// before closing: closing with unread bytes would reset the connection, and the peer might
    /// lose the `400` written before.
    private static func drainAndClose(_ connection: Int32) {
        shutdown(connection, Int32(SHUT_WR))
        var drained = 0
        while drained < 1 << 20, let chunk = receive(connection), !chunk.isEmpty { drained += chunk.count }
        closeDescriptor(connection)
    }

    private static func write(_ bytes: [UInt8], to connection: Int32) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }
}

/// `close(2)`, out of the reach of ``LoopbackPostReceiver/close()``'s name.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
