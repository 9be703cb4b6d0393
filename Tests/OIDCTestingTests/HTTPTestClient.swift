import Foundation
import OIDC
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 response, as received.
struct HTTPTestResponse: Sendable {
    let status: Int
    let headers: [HTTPTestClient.Header]
    let body: [UInt8]

    /// The value of the only header field with this name; `nil` when absent or repeated.
    func header(_ name: String) -> String? {
        let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        return values.count == 1 ? values[0].value : nil
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    var location: String? { header("Location") }

    /// The query parameters of the `Location` header, decoded; duplicates are an error.
    func redirectParameters() throws -> [String: String] {
        let location = try #require(location)
        let query = location.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        var result: [String: String] = [:]
        for parameter in try FormEncoding.decode(query) { result[parameter.name] = parameter.value }
        return result
    }
}

/// A tiny HTTP/1.1 client over a plain socket, for driving the test provider exactly as written:
/// no redirects followed, no cookies, `Connection: close`, every wait bounded by a socket timeout.
/// The blocking socket runs on its own thread, never on the cooperative pool.
enum HTTPTestClient {
    struct Header: Sendable {
        var name: String
        var value: String
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let timeout: TimeInterval = 30

    static func get(_ url: String, headers: [Header] = []) async throws -> HTTPTestResponse {
        try await send("GET", url, headers: headers)
    }

    /// A form POST; the pairs are encoded in order.
    static func postForm(_ url: String, _ form: KeyValuePairs<String, String>, headers: [Header] = []) async throws -> HTTPTestResponse {
        let body = FormEncoding.encode(form.map { OAuthParameter($0.key, $0.value) })
        return try await send(
            "POST", url, headers: headers + [Header(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8)
        )
    }

    static func send(_ method: String, _ url: String, headers: [Header] = [], body: [UInt8] = []) async throws -> HTTPTestResponse {
        let target = try Target(url)
        var head = "\(method) \(target.requestTarget) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nConnection: close\r\n"
        for header in headers { head += "\(header.name): \(header.value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let raw = try await exchange(host: target.host, port: target.port, request: Array(head.utf8) + body)
        return try parse(raw)
    }

    /// Whether a TCP connection to `host:port` is accepted (IPv4 literal), within the timeout.
    static func canConnect(host: String, port: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread {
                let fd = try? connectedSocket(host: host, port: port)
                if let fd { close(fd) }
                continuation.resume(returning: fd != nil)
            }.start()
        }
    }

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

    /// Sends these exact bytes and returns everything received until the server closes.
    static func exchange(host: String, port: Int, request: [UInt8]) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try blockingExchange(host: host, port: port, request: request) })
            }.start()
        }
    }

    private static func connectedSocket(host: String, port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw Failure(description: "Not an IPv4 literal: \(host)")
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect() to \(host):\(port) failed: errno \(errno)")
        }
        return fd
    }

    private static func blockingExchange(host: String, port: Int, request: [UInt8]) throws -> [UInt8] {
        let fd = try connectedSocket(host: host, port: port)
        defer { close(fd) }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while response.count < 64 * 1024 * 1024 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            guard n > 0 else {
                if errno == ECONNRESET, !response.isEmpty { break }
                throw Failure(description: "recv() failed: errno \(errno)")
            }
            response.append(contentsOf: buffer[..<n])
        }
        return response
    }

    #if canImport(Glibc)
    private static func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
    }
    #else
    private static func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        Darwin.send(fd, buffer, count, 0)
    }
    #endif

    private static func parse(_ raw: [UInt8]) throws -> HTTPTestResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.indices.first(where: { raw[$0...].starts(with: separator) }) else {
            throw Failure(description: "No complete response head (\(raw.count) bytes received)")
        }
        let head = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw Failure(description: "Bad status line: \(head[0])")
        }
        let headers = head.dropFirst().compactMap { line -> Header? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return Header(
                name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            )
        }
        var body = Array(raw[(end + 4)...])
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }) {
            guard body.count >= length else { throw Failure(description: "Body shorter than Content-Length") }
            body = Array(body.prefix(length))
        }
        return HTTPTestResponse(status: status, headers: headers, body: body)
    }
}
