import Foundation
import OIDCTestSupport
import Testing

/// The glewlwyd test's listener on its own, without glewlwyd: a request goes to the test and the
/// test's answer back to the sender; bad requests are answered `400` and never handed over.
@Suite("Loopback POST receiver (the back-channel logout tests' listener)", .timeLimit(.scaledMinutes(1)))
struct LoopbackPostReceiverTests {
    @Test("a form POST reaches the test, whose answer goes back to the sender")
    func roundTrip() async throws {
        let receiver = try LoopbackPostReceiver.start(maximumBodyLength: 1024)
        defer { receiver.close() }
        async let answer = RawHTTPClient.send(
            "POST", receiver.url("/backchannel-logout").absoluteString,
            headers: [.init(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: Array("logout_token=a.b.c".utf8))
        let request = try await receiver.next(within: .scaled(.seconds(10)))
        #expect(request.method == "POST" && request.target == "/backchannel-logout")
        #expect(request.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(request.body == Array("logout_token=a.b.c".utf8))
        await receiver.respond(to: request, status: 200, headers: ["Cache-Control": "no-store"])
        let response = try await answer
        #expect(response.status == 200 && response.header("Cache-Control") == "no-store" && response.body.isEmpty)
    }

    @Test(
        "a request without Content-Length, with too long a body, a bad request line or an endless head is answered 400 and not handed over",
        arguments: [
            "POST / HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "POST /\r\nContent-Length: 0\r\n\r\n",
            "POST / HTTP/1.1\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n",
        ])
    func badRequests(_ raw: String) async throws {
        let receiver = try LoopbackPostReceiver.start(maximumBodyLength: 1024)
        defer { receiver.close() }
        let refused = try await RawHTTPClient.exchange("127.0.0.1", receiver.port, Array(raw.utf8))
        #expect(refused.status == 400)
        // The next request handed over is the good one that came after.
        async let answer = RawHTTPClient.send("POST", receiver.url("/after").absoluteString, body: Array("x=1".utf8))
        let request = try await receiver.next(within: .scaled(.seconds(10)))
        #expect(request.target == "/after")
        await receiver.respond(to: request, status: 200)
        #expect(try await answer.status == 200)
    }
}
