import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// `serve(_:)`: the login is served before the wait starts, so a browser quicker than the caller's
/// `waitForAuthorization` (a launcher returns at once) never meets a "not ready" page.
@Suite("Loopback listener: serving before the wait", .timeLimit(.scaledMinutes(1)))
struct LoopbackServeTests {
    typealias Client = RawHTTPClient

    @Test("after serve, the start URL redirects at once; a callback before the wait is kept for it")
    func earlyBrowser() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try LoopbackRedirectListenerTests.request(for: listener)
        try listener.serve(request)
        try listener.serve(request)  // the same request again is harmless
        let head = try await Client.send("HEAD", listener.startURL.path, to: listener)
        #expect(head.status == 405)  // a link checker neither learns the location nor uses up the link
        #expect(head.header("Location") == nil)
        let start = try await Client.send("GET", listener.startURL.path, to: listener)
        #expect(start.status == 302)
        #expect(start.header("Location") == (try request.url().absoluteString))
        let foreign = try await Client.send("GET", "/callback?code=x&state=other", to: listener)
        #expect(foreign.status == 400)
        let early = try await Client.send("GET", "/callback?code=the-code&state=\(request.state)", to: listener)
        #expect(early.status == 200)
        let response = try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(5)))
        #expect(response.code.revealedValue == "the-code")
        #expect(!(await Client.canConnect("127.0.0.1", listener.port)))
    }

    @Test("serving another request, or waiting for another than the one served, is refused; the served login goes on")
    func anotherRequestRefused() async throws {
        let listener = try await LoopbackRedirectListener.start()
        let request = try LoopbackRedirectListenerTests.request(for: listener)
        try listener.serve(request)
        let other = try LoopbackRedirectListenerTests.request(for: listener)
        #expect(throws: OIDCError.self) { try listener.serve(other) }
        await #expect(throws: OIDCError.self) { _ = try await listener.waitForAuthorization(other, timeout: .scaled(.seconds(5))) }
        let waiting = Task { try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(10))) }
        let done = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener)
        #expect(done.status == 200)
        #expect(try await waiting.value.code.revealedValue == "c")
    }

    @Test("serve refuses a request whose redirect URI leads elsewhere")
    func foreignRedirectURI() async throws {
        let listener = try await LoopbackRedirectListener.start()
        var request = try LoopbackRedirectListenerTests.request(for: listener)
        request.redirectURI = "http://127.0.0.1:1/callback"
        #expect(throws: OIDCError.self) { try listener.serve(request) }
        await listener.close()
    }
}
