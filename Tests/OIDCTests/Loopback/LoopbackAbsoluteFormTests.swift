import Foundation
import Logging
import OIDC
import OIDCTestSupport
import Testing

/// Request targets in absolute form (`GET http://127.0.0.1:PORT/path HTTP/1.1`, RFC 9112 §3.2.2),
/// which a server must accept: they name the same resource as their path, and are logged by their
/// path only, so the start URL's random path is never logged (security review 3, I1).
@Suite("Loopback redirect listener: absolute-form targets", .timeLimit(.scaledMinutes(1)))
struct LoopbackAbsoluteFormTests {
    typealias Client = RawHTTPClient
    typealias Listener = LoopbackRedirectListenerTests

    @Test("an absolute-form start URL redirects like its path, and the log says <start>, never the random path")
    func startInAbsoluteForm() async throws {
        let recorder = LogRecorder()
        var configuration = LoopbackRedirectListener.Configuration()
        configuration.callbackGrace = .zero
        let listener = try await LoopbackRedirectListener.start(configuration, logger: recorder.logger("oidc.loopback"))
        let request = try Listener.request(for: listener)
        let waiting = try await Listener.startWaiting(listener, request)
        let secret = String(listener.startURL.path.dropFirst())
        let authority = "127.0.0.1:\(listener.port)"

        let start = try await Client.send("GET", "http://\(authority)\(listener.startURL.path)", to: listener)
        #expect(start.status == 302)
        #expect(start.header("Location") == (try request.url().absoluteString))
        // The random part elsewhere in a path, in any case of scheme, is cut out of the log as well.
        #expect(try await Client.send("GET", "HTTP://\(authority)/x/\(secret)/y", to: listener).status == 404)
        #expect(try await Client.send("GET", "/x\(secret)", to: listener).status == 404)
        let done = try await Client.send("GET", "http://\(authority)/callback?code=abs&state=\(request.state)", to: listener)
        #expect(done.status == 200)
        #expect(try await waiting.value.code.revealedValue == "abs")

        let answered = recorder.lines("oidc.loopback", "loopback request answered")
        #expect(answered.count == 4)
        #expect(answered.map { $0.metadata["path"]?.description } == ["<start>", "/x/<start>/y", "/x<start>", "/callback"])
        for line in recorder.all {
            #expect(!line.rendered.contains(secret), "the start path is logged: \(line.rendered)")
            #expect(!line.rendered.contains(request.state), "the state is logged: \(line.rendered)")
        }
    }

    @Test("an absolute-form target naming another host gets 400 and is ignored")
    func foreignAuthority() async throws {
        try await Listener.withListener { listener in
            let request = try Listener.request(for: listener)
            let waiting = try await Listener.startWaiting(listener, request)
            for authority in ["evil.example", "evil.example:\(listener.port)", "127.0.0.1:\(listener.port + 1)", "user@127.0.0.1:\(listener.port)"] {
                let callback = try await Client.send("GET", "http://\(authority)/callback?code=c&state=\(request.state)", to: listener)
                #expect(callback.status == 400, "\(authority)")
                let start = try await Client.send("GET", "http://\(authority)\(listener.startURL.path)", to: listener)
                #expect(start.status == 400, "\(authority)")
                #expect(start.header("Location") == nil)
            }
            // The start URL was not used up, and the login goes on.
            #expect(try await Client.send("GET", listener.startURL.path, to: listener).status == 302)
            #expect(try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener).status == 200)
            _ = try await waiting.value
        }
    }
}
