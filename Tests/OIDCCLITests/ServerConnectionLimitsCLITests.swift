import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// `oidc resource-server`'s and `oidc provider`'s connection flags (issue 35: an unfinished request
/// was never timed out, and 3,000 idle connections were all held). Each test waits for the
/// server's close of a connection (end of stream), never for a span of time.
@Suite("oidc resource-server and oidc provider: connection limits", .timeLimit(.scaledMinutes(2)))
struct ServerConnectionLimitsCLITests {
    /// Everything `socket` receives until the server closes it, read on a thread of its own.
    static func untilClosed(_ socket: RawHTTPClient.Socket) async throws -> String {
        let bytes = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
            Thread { continuation.resume(with: Result { try socket.readUntilClosed() }) }.start()
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("--max-connections closes a connection over the limit, unanswered, while an answered one holds the only slot")
    func resourceServerConnectionLimit() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--max-connections", "1", "--idle-timeout", "600"])
        let port = try #require(URLComponents(string: server.base)?.port)
        // An answered request: the connection is surely accepted and counted (no race with a deadline
        // on a busy machine), and it stays open for 600 s.
        let holder = try await RawHTTPClient.openSlowHeads(1, "127.0.0.1", port, sending: Array("GET /me HTTP/1.1\r\nHost: x\r\n\r\n".utf8))[0]
        defer { holder.close() }
        #expect(try holder.readResponses(1, status: 401) == 1)
        let over = try await RawHTTPClient.openSlowHeads(1, "127.0.0.1", port, sending: Array("GET /me HTTP/1.1\r\nHost: x\r\n\r\n".utf8))[0]
        defer { over.close() }
        #expect(try await Self.untilClosed(over).isEmpty)
        let stopped = await server.stop()
        #expect(stopped.status == 0)
    }

    @Test("--header-timeout closes an unfinished request head, unanswered")
    func resourceServerHeaderTimeout() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--header-timeout", "1", "--idle-timeout", "600"])
        let port = try #require(URLComponents(string: server.base)?.port)
        let slow = try await RawHTTPClient.openSlowHeads(1, "127.0.0.1", port, sending: Array("GET /me HTTP/1.1\r\nHost: x\r\n".utf8))[0]
        defer { slow.close() }
        // Only the head's deadline can close it: the idle timeout is 600 s and no limit is near.
        #expect(try await Self.untilClosed(slow).isEmpty)
        let stopped = await server.stop()
        #expect(stopped.status == 0)
    }

    @Test("a connection limit or a timeout out of range is a usage error (exit 2) naming the flag")
    func badValues() async throws {
        for (flag, value) in [("--max-connections", "0"), ("--idle-timeout", "0"), ("--header-timeout", "3601")] {
            for command in [["provider"], ["resource-server", "--issuer", "https://login.example.com", "--audience", "https://api.example.com"]] {
                let result = try await OIDCBinary.run(command + [flag, value])
                #expect(result.status == 2, "\(command[0]) \(flag) \(value)")
                #expect(result.stderr.contains(flag), "\(result.stderr)")
            }
        }
    }
}
