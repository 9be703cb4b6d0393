import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A client that pipelines requests and never reads its answers must not make the server buffer
/// answers without bound (a review of issue 35's server found 94 MB grow to 826 MB): a request is
/// started only while the connection can take more writes. When the client reads again, every
/// request is answered, in order.
@Suite("HTTP servers: a client that does not read its answers", .timeLimit(.scaledMinutes(1)))
struct HTTPBackpressureTests {
    @Test("pipelined requests that are not read stop being answered once the connection is full, and are all answered when it drains")
    func pipelinedRequestsWaitForTheReader() async throws {
        let provider = try await TestProvider.start()
        do {
            let request = Array("GET /.well-known/openid-configuration HTTP/1.1\r\nHost: 127.0.0.1:\(provider.port)\r\n\r\n".utf8)
            let socket = try await RawHTTPClient.connection("127.0.0.1", provider.port, receiveBuffer: 4096)
            defer { socket.close() }
            let sent = try socket.sendRepeatedly(request, count: 4000, patience: .milliseconds(500))
            #expect(sent >= 1000, "the kernel took only \(sent) requests")
            // The server answers until its writes back up, then waits: the count settles well below
            // what was sent (without backpressure it reaches `sent`, every answer buffered).
            var answered = await provider.requestCount(.discovery)
            var unchanged = 0
            for _ in 0..<200 where unchanged < 5 {
                try await Task.sleep(for: .milliseconds(100))
                let now = await provider.requestCount(.discovery)
                unchanged = now == answered ? unchanged + 1 : 0
                answered = now
            }
            #expect(unchanged >= 5, "the server never stopped answering")
            #expect(answered < sent / 2, "\(answered) of \(sent) answered while the client read nothing")
            // Reading drains the connection: every request is answered, 200 each.
            let received = try await Task.detached { try socket.readResponses(sent, status: 200) }.value
            #expect(received == sent)
            #expect(await provider.requestCount(.discovery) == sent)
        } catch {
            try await provider.shutdown()
            throw error
        }
        try await provider.shutdown()
    }
}
