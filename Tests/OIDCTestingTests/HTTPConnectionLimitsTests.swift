import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The kit's HTTP servers (TestProvider, so `oidc provider`, and `oidc resource-server`) bound
/// connections in number and in time: an unfinished request head is cut at the request-head
/// timeout, a keep-alive connection at the idle timeout, and one over the limit is closed at once
/// (issue 35: 3,000 idle connections held 3,000 descriptors). Each test waits for the server's close
/// (end of stream on the socket); the timer that must not fire is set to five minutes, so a close
/// can only come from the one under test.
@Suite("HTTP servers: connection limits and timeouts", .timeLimit(.scaledMinutes(1)))
struct HTTPConnectionLimitsTests {
    static let never = Duration.seconds(300)

    static func withProvider(_ limits: HTTPConnectionLimits, _ body: (TestProvider) async throws -> Void) async throws {
        var configuration = TestProvider.Configuration()
        configuration.connectionLimits = limits
        let provider = try await TestProvider.start(configuration)
        do { try await body(provider) } catch {
            try await provider.shutdown()
            throw error
        }
        try await provider.shutdown()
    }

    static func discoveryRequest(_ provider: TestProvider) -> [UInt8] {
        Array("GET /.well-known/openid-configuration HTTP/1.1\r\nHost: 127.0.0.1:\(provider.port)\r\n\r\n".utf8)
    }

    /// Everything `socket` receives until the server closes it, read on a thread of its own (the
    /// socket's own receive timeout, 10 s, throws if the server never closes).
    static func untilClosed(_ socket: RawHTTPClient.Socket) async throws -> String {
        let bytes = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
            Thread { continuation.resume(with: Result { try socket.readUntilClosed() }) }.start()
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One connection that has sent `bytes`.
    static func connection(_ provider: TestProvider, sending bytes: [UInt8]) async throws -> RawHTTPClient.Socket {
        try await RawHTTPClient.openSlowHeads(1, "127.0.0.1", provider.port, sending: bytes)[0]
    }

    @Test("a request head that never ends is closed at the request-head timeout (slowloris), unanswered")
    func unfinishedHeadClosed() async throws {
        try await Self.withProvider(HTTPConnectionLimits(idleTimeout: Self.never, requestHeadTimeout: .milliseconds(200))) { provider in
            let socket = try await Self.connection(provider, sending: Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: a".utf8))
            defer { socket.close() }
            #expect(try await Self.untilClosed(socket).isEmpty)
            // A whole request is still answered.
            #expect(try await RawHTTPClient.get(provider.discoveryURL).status == 200)
        }
    }

    @Test("a keep-alive connection is closed after its answer once idle for the idle timeout; so is one that never sends")
    func idleKeepAliveClosed() async throws {
        try await Self.withProvider(HTTPConnectionLimits(idleTimeout: .milliseconds(200), requestHeadTimeout: Self.never)) { provider in
            let socket = try await Self.connection(provider, sending: Self.discoveryRequest(provider))
            defer { socket.close() }
            let received = try await Self.untilClosed(socket)
            #expect(received.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(received.lowercased().contains("connection: keep-alive"))
            let silent = try await RawHTTPClient.silentConnection("127.0.0.1", provider.port)
            #expect(silent.bytes.isEmpty)
        }
    }

    @Test("a connection over the limit is closed at once; those admitted are served, and a freed slot is taken again")
    func connectionCap() async throws {
        let limits = HTTPConnectionLimits(maximumConnections: 2, idleTimeout: Self.never, requestHeadTimeout: Self.never)
        try await Self.withProvider(limits) { provider in
            let head = Array("GET /.well-known/openid-configuration HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
            let held = try await RawHTTPClient.openSlowHeads(2, "127.0.0.1", provider.port, sending: head)
            defer { for socket in held { socket.close() } }
            // Accepted in order: the third waits behind the two in the listen queue, then is closed unread.
            let third = try await Self.connection(provider, sending: Self.discoveryRequest(provider))
            defer { third.close() }
            #expect(try await Self.untilClosed(third).isEmpty, "the connection over the limit was answered")
            // An admitted one finishes its request and is answered.
            try held[0].send(Array("Connection: close\r\n\r\n".utf8))
            #expect(try await Self.untilClosed(held[0]).hasPrefix("HTTP/1.1 200 OK\r\n"))
            // Its slot is freed once the server has seen it close: each try waits for an answer or a close.
            var answered = false
            for _ in 0..<200 where !answered {
                let next = try await Self.connection(provider, sending: Array("GET /jwks HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
                answered = try await Self.untilClosed(next).hasPrefix("HTTP/1.1 200 OK\r\n")
                next.close()
            }
            #expect(answered, "no new connection was served after a slot was freed")
        }
    }

    @Test("a connection limit below 1 or a timeout that is not positive is refused at start")
    func badLimits() async throws {
        for limits in [
            HTTPConnectionLimits(maximumConnections: 0), HTTPConnectionLimits(idleTimeout: .zero),
            HTTPConnectionLimits(requestHeadTimeout: .milliseconds(-1)),
        ] {
            var configuration = TestProvider.Configuration()
            configuration.connectionLimits = limits
            let error = await #expect(throws: OIDCError.self) { try await TestProvider.start(configuration) }
            #expect(error?.code == .invalidArgument)
        }
    }
}
