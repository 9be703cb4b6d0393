import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// The start URL opened twice (security review 3, M1): another local program that opened it first
/// could sign in with its own account; the user's browser opening it too is then the second request,
/// during the wait or within the callback grace, and it aborts the login instead of letting it be swapped.
@Suite("Loopback redirect listener: a start URL opened twice", .timeLimit(.scaledMinutes(1)))
struct LoopbackRaceTests {
    typealias Client = RawHTTPClient
    typealias Listener = LoopbackRedirectListenerTests

    static func configuration(grace: Duration) -> LoopbackRedirectListener.Configuration {
        var configuration = LoopbackRedirectListener.Configuration()
        configuration.callbackGrace = grace
        return configuration
    }

    static func expectAborted(_ page: Client.Response, _ request: AuthorizationRequest, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(page.status == 409, sourceLocation: sourceLocation)
        #expect(page.text.contains("Sign-in aborted"), sourceLocation: sourceLocation)
        #expect(page.text.contains("may have opened the link first"), sourceLocation: sourceLocation)
        #expect(page.text.contains("run the login again"), sourceLocation: sourceLocation)
        #expect(!page.text.contains(request.state), sourceLocation: sourceLocation)
        #expect(page.header("Location") == nil, sourceLocation: sourceLocation)
        #expect(page.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
    }

    static func expectReused(_ error: OIDCError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .startURLReused, sourceLocation: sourceLocation)
        #expect(error?.category == .security, sourceLocation: sourceLocation)
        #expect(
            error?.message
                == "The sign-in link was opened a second time while this login was being completed: another program on this computer may have opened it first, to sign you in to its own account. The login was aborted before the code was exchanged, so nothing was stored; run the login again.",
            sourceLocation: sourceLocation
        )
    }

    @Test("a second request for the start URL while the login waits aborts it with startURLReused, and the port closes")
    func secondRequestDuringWait() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request)
        #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302)
        let second = try await Client.send("GET", listener.startURL.path, to: listener)
        Self.expectAborted(second, request)
        let error = await #expect(throws: OIDCError.self) { try await waiting.value }
        Self.expectReused(error)
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
    }

    @Test("the other program wins: its callback is held, and the browser's request for the start URL in the grace aborts the login")
    func racedCallbackAborted() async throws {
        let listener = try await LoopbackRedirectListener.start(Self.configuration(grace: .scaled(.seconds(10))))
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request)
        // The other program: the start URL, then (having signed in with its own account) the callback.
        #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302)
        let attackers = try await Client.send("GET", "/callback?code=attackers-code&state=\(request.state)", to: listener)
        #expect(attackers.status == 200)
        // Held: the listener still answers, and the wait has not ended.
        try await Task.sleep(for: .milliseconds(200))
        #expect(await Client.canConnect("127.0.0.1", listener.port))
        // The user's browser arrives.
        let browser = try await Client.send("GET", listener.startURL.path, to: listener)
        Self.expectAborted(browser, request)
        let error = await #expect(throws: OIDCError.self) { try await waiting.value }
        Self.expectReused(error)
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
    }

    @Test("a valid callback after the start URL is held for the grace, then returned; a timeout that falls in the grace does not discard it")
    func heldThenReturned() async throws {
        let grace = Duration.seconds(3)
        let listener = try await LoopbackRedirectListener.start(Self.configuration(grace: grace))
        let request = try Listener.request(for: listener)
        try listener.serve(request)
        #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302)
        let sent = ContinuousClock.now
        #expect(try await Client.send("GET", "/callback?code=the-code&state=\(request.state)", to: listener).status == 200)
        // The callback is held: a wait that starts now times out (0.3 s) inside the hold, and still gets it.
        let response = try await listener.waitForAuthorization(request, timeout: .milliseconds(300))
        let held = ContinuousClock.now - sent
        #expect(response.code.revealedValue == "the-code")
        #expect(held >= grace - .milliseconds(100), "returned after \(held)")
        #expect(held < grace + .scaled(.seconds(20)), "returned after \(held)")
        #expect(await !Client.canConnect("127.0.0.1", listener.port))
    }

    @Test("no hold when nothing could have been raced: the start URL never opened, or a zero grace")
    func notHeld() async throws {
        for (opensStart, grace) in [(false, Duration.scaled(.seconds(30))), (true, Duration.zero)] {
            let listener = try await LoopbackRedirectListener.start(Self.configuration(grace: grace))
            let request = try Listener.request(for: listener)
            let waiting = try await Listener.startWaiting(listener, request)
            if opensStart { #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302) }
            let sent = ContinuousClock.now
            #expect(try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener).status == 200)
            _ = try await waiting.value
            #expect(ContinuousClock.now - sent < .scaled(.seconds(10)))  // not the grace
        }
    }

    @Test("cancelling during the hold ends the wait with cancelled at once")
    func cancelledDuringHold() async throws {
        let listener = try await LoopbackRedirectListener.start(Self.configuration(grace: .scaled(.seconds(30))))
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request)
        #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302)
        #expect(try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener).status == 200)
        let cancelled = ContinuousClock.now
        waiting.cancel()
        let error = await #expect(throws: OIDCError.self) { try await waiting.value }
        #expect(error?.code == .cancelled)
        #expect(ContinuousClock.now - cancelled < .scaled(.seconds(10)))  // not the grace
    }

    @Test("a start URL opened twice before the wait began: the wait ends with startURLReused")
    func abortedBeforeWait() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try Listener.request(for: listener)
        try listener.serve(request)
        #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302)
        Self.expectAborted(try await Client.send("GET", listener.startURL.path, to: listener), request)
        // The other program's callback, too late: answered with the same page, and ignored.
        Self.expectAborted(try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener), request)
        let error = await #expect(throws: OIDCError.self) { try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(5))) }
        Self.expectReused(error)
    }
}
