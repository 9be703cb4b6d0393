import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// The listener's bounds on connections: how many, how long silent, how long a request head may take,
/// and who gives way when all slots are taken (security review 3, L1).
@Suite("Loopback redirect listener: connection limits", .timeLimit(.scaledMinutes(1)))
struct LoopbackLimitsTests {
    typealias Client = RawHTTPClient
    typealias Listener = LoopbackRedirectListenerTests

    /// The start of a request head that never ends, as a slow client sends it.
    static func unfinishedHead(_ listener: LoopbackRedirectListener) -> [UInt8] {
        Array("GET /callback HTTP/1.1\r\nHost: 127.0.0.1:\(listener.port)\r\nX-Pad: a\r\n".utf8)
    }

    @Test("a silent connection is closed after the idle timeout")
    func idleTimeout() async throws {
        var configuration = LoopbackRedirectListener.Configuration()
        configuration.idleTimeout = .milliseconds(300)
        try await Listener.withListener(configuration) { listener in
            let (bytes, seconds) = try await Client.silentConnection("127.0.0.1", listener.port)
            #expect(bytes.isEmpty)
            #expect(seconds >= 0.2 && seconds < 5 * TestTime.scale)
        }
    }

    @Test("16 slow request heads do not keep the browser out: its request evicts the oldest slow one and is answered")
    func slowHeadsEvicted() async throws {
        var configuration = LoopbackRedirectListener.Configuration()
        // Neither timer may close the slow ones during the test: only eviction makes room.
        configuration.idleTimeout = .seconds(300)
        configuration.requestHeadTimeout = .seconds(300)
        try await Listener.withListener(configuration) { listener in
            let request = try Listener.request(for: listener)
            let waiting = try await Listener.startWaiting(listener, request)
            let slow = try await Client.openSlowHeads(16, "127.0.0.1", listener.port, sending: Self.unfinishedHead(listener))
            defer { for socket in slow { socket.close() } }
            // They are admitted on the listener's thread a moment after connecting.
            for _ in 0..<TestTime.scaled(500) where listener.openConnectionCount < 16 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(listener.openConnectionCount == 16)

            let browser = try await Client.send("GET", listener.startURL.path, to: listener)
            #expect(browser.status == 302)
            #expect(browser.header("Location") == (try request.url().absoluteString))
            var evicted = false
            for _ in 0..<TestTime.scaled(200) where !evicted {
                evicted = slow[0].isClosedByPeer
                if !evicted { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(evicted, "the oldest slow connection was not the one evicted")
            #expect(slow.dropFirst().allSatisfy { !$0.isClosedByPeer }, "a younger slow connection was closed")
            waiting.cancel()
            _ = await waiting.result
        }
    }

    @Test("a request head that trickles in is cut off at the request-head deadline, however often it sends")
    func requestHeadDeadline() async throws {
        var configuration = LoopbackRedirectListener.Configuration()
        configuration.idleTimeout = .seconds(300)
        configuration.requestHeadTimeout = .milliseconds(500)
        try await Listener.withListener(configuration) { listener in
            let closedAfter = try await Client.trickle(
                "127.0.0.1", listener.port, head: Self.unfinishedHead(listener), every: .milliseconds(100), for: .scaled(.seconds(5))
            )
            let seconds = try #require(closedAfter, "the trickling connection was still open after \(TestTime.scaled(5)) s")
            #expect(seconds >= 0.4 && seconds < 4 * TestTime.scale, "closed after \(seconds) s")
            // A browser's whole head, sent at once, is answered as before.
            #expect(try await Client.send("GET", "/favicon.ico", to: listener).status == 404)
        }
    }

    @Test("a request-head timeout that is not positive, a negative callback grace or no connection at all is refused at start")
    func badLimits() async throws {
        var noHeadTime = LoopbackRedirectListener.Configuration()
        noHeadTime.requestHeadTimeout = .zero
        var negativeGrace = LoopbackRedirectListener.Configuration()
        negativeGrace.callbackGrace = .milliseconds(-1)
        var noConnection = LoopbackRedirectListener.Configuration()
        noConnection.maximumConnections = 0
        for configuration in [noHeadTime, negativeGrace, noConnection] {
            let error = await #expect(throws: OIDCError.self) { try await LoopbackRedirectListener.start(configuration) }
            #expect(error?.code == .invalidArgument)
        }
        var noGrace = LoopbackRedirectListener.Configuration()
        noGrace.callbackGrace = .zero
        await (try LoopbackRedirectListener.start(noGrace)).close()
    }
}
