import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// How a wait ends: the first valid callback, a timeout, a cancellation, `close()`, a second wait or
/// a request that does not lead here; in every case the listener's port is closed.
@Suite("Loopback redirect listener: ending the wait", .timeLimit(.scaledMinutes(1)))
struct LoopbackWaitEndTests {
    typealias Client = RawHTTPClient
    typealias Listener = LoopbackRedirectListenerTests

    @Test("the listener closes right after the first valid callback")
    func closesAfterCallback() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request)
        let page = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener)
        #expect(page.status == 200)
        _ = try await waiting.value
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
        let again = await #expect(throws: OIDCError.self) { try await listener.waitForAuthorization(request) }
        #expect(again?.code == .invalidArgument)
        await listener.close()
    }

    @Test("a timeout throws loginTimedOut and closes the port")
    func timeout() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        let started = ContinuousClock.now
        let error = await #expect(throws: OIDCError.self) {
            try await listener.waitForAuthorization(request, timeout: .milliseconds(300))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(250))
        #expect(error?.code == .loginTimedOut)
        #expect(error?.category == .cancelled)
        // No browser opened the start URL: the message says so, and how to hand the URL over.
        #expect(error?.message.hasPrefix("No browser opened the sign-in link within 0.3 s") == true, "\(String(describing: error))")
        #expect(error?.message.contains("OIDC_BROWSER_HANDOFF=url") == true)
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
    }

    @Test("a timeout after the browser opened the start URL says the sign-in did not come back")
    func timeoutAfterTheBrowser() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        // Time for the browser's request on a loaded machine: the tests' scale, in whole seconds (the message names them).
        let seconds = TestTime.scaled(2)
        let waited = Task { () async throws(OIDCError) -> AuthorizationResponse in
            try await listener.waitForAuthorization(request, timeout: .seconds(seconds))
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await Listener.get(listener.startURL).status == 302)
        let error = await #expect(throws: OIDCError.self) { _ = try await waited.value }
        #expect(
            error?.message
                == "No sign-in came back to \(listener.redirectURI) within \(seconds) s; run the login again (and finish it in the browser in time), or give it more time."
        )
    }

    @Test("cancelling the waiting task throws cancelled and closes the port")
    func cancellation() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request, timeout: nil)
        waiting.cancel()
        let error = await #expect(throws: OIDCError.self) { try await waiting.value }
        #expect(error?.code == .cancelled)
        #expect(error?.message == "The login was cancelled.")
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
    }

    @Test("close() during a wait ends it with cancelled; close() is idempotent")
    func closeDuringWait() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request)
        try await Client.withSilentConnections(1, "127.0.0.1", listener.port) {
            async let first: Void = listener.close()
            async let second: Void = listener.close()
            _ = await (first, second)
        }
        let error = await #expect(throws: OIDCError.self) { try await waiting.value }
        #expect(error?.code == .cancelled)
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
        await listener.close()
        let after = await #expect(throws: OIDCError.self) { try await listener.waitForAuthorization(request) }
        #expect(after?.code == .invalidArgument)
    }

    @Test("a second concurrent wait is refused and leaves the first alone")
    func secondWait() async throws {
        try await Listener.withListener { listener in
            let request = try Listener.request(for: listener)
            let waiting = try await Listener.startWaiting(listener, request)
            let error = await #expect(throws: OIDCError.self) { try await listener.waitForAuthorization(request) }
            #expect(error?.code == .invalidArgument)
            var stray = request
            stray.redirectURI = "http://127.0.0.1:1/callback"
            let strayError = await #expect(throws: OIDCError.self) { try await listener.waitForAuthorization(stray) }
            #expect(strayError?.code == .invalidArgument)
            let done = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener)
            #expect(done.status == 200)
            _ = try await waiting.value
        }
    }

    @Test("a request whose redirect URI does not lead here is refused and the listener closed")
    func foreignRedirectURI() async throws {
        let listener = try await LoopbackRedirectListener.start()
        var request = try Listener.request(for: listener)
        request.redirectURI = "http://127.0.0.1:\(listener.port)/other"
        let error = await #expect(throws: OIDCError.self) { try await listener.waitForAuthorization(request) }
        #expect(error?.code == .invalidArgument)
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
    }

    @Test("a redirect URI with localhost and the listener's port is accepted")
    func localhostRedirectURI() async throws {
        try await Listener.withListener { listener in
            var request = try Listener.request(for: listener)
            request.redirectURI = "http://localhost:\(listener.port)/callback"
            let waiting = try await Listener.startWaiting(listener, request)
            let done = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener, host: "localhost:\(listener.port)")
            #expect(done.status == 200)
            _ = try await waiting.value
        }
    }
}
