import Foundation
import OIDC
import OIDCTestSupport
import Testing

@Suite("Loopback redirect listener", .timeLimit(.scaledMinutes(1)))
struct LoopbackRedirectListenerTests {
    typealias Client = RawHTTPClient

    // MARK: Binding

    @Test("binds an ephemeral port on 127.0.0.1 and names it in the redirect URI")
    func ephemeralPort() async throws {
        try await withListener { listener in
            #expect(listener.port > 0)
            #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/callback")
            #expect(listener.startURL.absoluteString.hasPrefix("http://127.0.0.1:\(listener.port)/"))
            #expect(listener.startURL.path.count == 23)  // "/" and 128 random bits in base64url
            #expect(await Client.canConnect("127.0.0.1", listener.port))
        }
    }

    @Test("a fixed port taken by another program is portInUse, naming the endpoint")
    func fixedPortInUse() async throws {
        try await withListener { holder in
            let endpoint = try LoopbackRedirectListener.Endpoint(host: "127.0.0.1", port: holder.port)
            let error = await #expect(throws: OIDCError.self) {
                try await LoopbackRedirectListener.start(.init(endpoints: [endpoint]))
            }
            #expect(error?.code == .portInUse)
            #expect(error?.message == "127.0.0.1:\(holder.port) is in use by another program; choose another port or stop the program that holds it.")
            #expect(error?.context["endpoint"] == "127.0.0.1:\(holder.port)")
        }
    }

    @Test("a fixed port is bound again right after the last login on it closed")
    func fixedPortRebound() async throws {
        let first = try await LoopbackRedirectListener.start()
        let port = first.port
        let request = try Self.request(for: first)
        let waiting = try await Self.startWaiting(first, request)
        _ = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: first)
        _ = try await waiting.value
        let second = try await LoopbackRedirectListener.start(.init(endpoints: [try .init(host: "127.0.0.1", port: port)]))
        #expect(second.port == port)
        await second.close()
    }

    @Test(
        "127.0.0.1 and ::1 share one port and one redirect URI",
        .enabled(if: RawHTTPClient.canBindIPv6Loopback, "::1 cannot be bound on this machine (no IPv6 loopback)")
    )
    func dualStack() async throws {
        try await withListener(.init(endpoints: [.ipv4, .ipv6])) { listener in
            #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/callback")
            #expect(await Client.canConnect("::1", listener.port))
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let start = try await Client.send("GET", listener.startURL.path, to: listener, address: "::1")
            #expect(start.status == 302)
            let callback = try await Client.send("GET", "/callback?code=six&state=\(request.state)", to: listener, address: "::1")
            #expect(callback.status == 200)
            #expect(try await waiting.value.code.revealedValue == "six")
        }
        try await withListener(.init(endpoints: [.ipv6, .ipv4])) { listener in
            #expect(listener.redirectURI == "http://[::1]:\(listener.port)/callback")
            #expect(listener.startURL.absoluteString.hasPrefix("http://[::1]:\(listener.port)/"))
            #expect(await Client.canConnect("127.0.0.1", listener.port))
        }
    }

    // MARK: GET /

    @Test("the start URL redirects once to the authorization URL once the login is served (503 before); / reveals nothing")
    func startRedirect() async throws {
        try await withListener { listener in
            let early = try await Self.get(listener.startURL)
            #expect(early.status == 503)
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            #expect(try await Client.send("GET", "/", to: listener).status == 404)
            #expect(try await Client.send("GET", "/?x=1", to: listener).status == 404)
            let response = try await Self.get(listener.startURL)
            #expect(response.status == 302)
            #expect(response.headers["Location"] == (try request.url().absoluteString))
            #expect(response.headers["Cache-Control"] == "no-store")
            #expect(response.headers["Connection"] == "close")
            // A second visit aborts the login: LoopbackRaceTests.
            waiting.cancel()
            _ = await waiting.result
        }
    }

    @Test("another listener's start path, or a guessed one, gets 404")
    func startPathIsSecret() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let other = try await LoopbackRedirectListener.start()
            #expect(other.startURL.path != listener.startURL.path)
            #expect(try await Client.send("GET", other.startURL.path, to: listener).status == 404)
            await other.close()
            waiting.cancel()
            _ = await waiting.result
        }
    }

    @Test("HEAD gets the same head and no body")
    func head() async throws {
        try await withListener { listener in
            let get = try await Client.send("GET", "/callback", to: listener)
            let head = try await Client.send("HEAD", "/callback", to: listener)
            #expect(head.status == 503)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == get.header("Content-Length"))
            #expect(head.header("Content-Type") == "text/html; charset=utf-8")
            #expect(head.header("Content-Security-Policy") == get.header("Content-Security-Policy"))
            #expect(!get.body.isEmpty)
        }
    }

    // MARK: Callbacks

    @Test("callbacks with a wrong, missing or repeated state or a broken query are ignored; the right one completes")
    func foreignCallbacksIgnored() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let foreign = [
                "/callback?code=MARKER1&state=MARKER2",
                "/callback?code=MARKER1",
                "/callback",
                "/callback?code=MARKER1&state=\(request.state)&state=\(request.state)",
                "/callback?code=MARKER1&state=\(request.state)&state=MARKER2",
                "/callback?code=MARKER1&state=\(request.state)%ZZ",
                "/callback?error=access_denied&state=MARKER2",
                "/callback?MARKER3=%E0%A4&state=\(request.state)",
            ]
            for target in foreign {
                let response = try await Client.send("GET", target, to: listener)
                #expect(response.status == 400, "\(target)")
                #expect(response.text.contains("does not belong to the login in progress; it was ignored"))
                #expect(!response.text.contains("MARKER"))
                #expect(!response.text.contains(request.state))
            }
            let done = try await Client.send("GET", "/callback?code=the-code&state=\(request.state)", to: listener)
            #expect(done.status == 200)
            let response = try await waiting.value
            #expect(response.code.revealedValue == "the-code")
            #expect(response.state == request.state)
        }
    }

    @Test("the success page shows neither code nor state and carries the security headers")
    func successPage() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let url = try #require(URL(string: "\(listener.redirectURI)?code=SECRETCODE&state=\(request.state)&iss=https%3A%2F%2Fidp.example"))
            let page = try await Self.get(url)
            #expect(page.status == 200)
            let text = String(decoding: page.body, as: UTF8.self)
            #expect(text.contains("You are signed in. You can close this window and return to the terminal."))
            #expect(!text.contains("SECRETCODE"))
            #expect(!text.contains(request.state))
            #expect(!text.contains("idp.example"))
            #expect(page.body.count < 2048)
            Self.expectSecurityHeaders(page.headers)
            let response = try await waiting.value
            #expect(response.issuer == "https://idp.example")
        }
    }

    @Test("a provider error ends the wait with providerError and the page shows the escaped description")
    func providerError() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let description = "<script>alert('x')</script> & \"quoted\""
            let target = "/callback?error=access_denied&error_description=\(FormEncoding.encode(value: description))&state=\(request.state)"
            let page = try await Client.send("GET", target, to: listener)
            #expect(page.status == 400)
            #expect(page.text.contains("access_denied"))
            #expect(page.text.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;"))
            #expect(!page.text.contains("<script>"))
            #expect(!page.text.contains(request.state))
            #expect(page.header("Content-Security-Policy") == "default-src 'none'; style-src 'unsafe-inline'")
            let error = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(error?.code == .providerError)
            #expect(error?.providerError?.error == "access_denied")
            #expect(error?.providerError?.errorDescription == description)
            #expect(await !Client.canConnect("127.0.0.1", listener.port))
        }
    }

    @Test("a long provider description is cut and the page stays under 2 KB")
    func longDescriptionBounded() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let long = FormEncoding.encode(value: String(repeating: "\"", count: 1000))
            let target = "/callback?error=\(long)&error_description=\(long)&state=\(request.state)"
            let page = try await Client.send("GET", target, to: listener)
            #expect(page.status == 400)
            #expect(page.body.count < 2048)
            #expect(page.text.contains("&quot;&quot;"))
            #expect(page.text.contains("…"))
            _ = await waiting.result
        }
    }

    @Test("a repeated code with the right state ends the wait with duplicateParameter")
    func repeatedCode() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let page = try await Client.send("GET", "/callback?code=a&code=b&state=\(request.state)", to: listener)
            #expect(page.status == 400)
            #expect(page.text.contains("Sign-in failed"))
            let error = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(error?.code == .duplicateParameter)
        }
    }

    @Test("an issuer that is not the expected one ends the wait with issuerMismatch")
    func issuerMismatch() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let page = try await Client.send("GET", "/callback?code=a&iss=https%3A%2F%2Fevil.example&state=\(request.state)", to: listener)
            #expect(page.status == 400)
            #expect(!page.text.contains("evil.example"))
            let error = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(error?.code == .issuerMismatch)
        }
    }

    // MARK: Other requests

    @Test("other paths get 404 and the wait goes on", arguments: ["/callback/", "/callbackx", "/Callback", "/favicon.ico", "/x/callback", "*"])
    func otherPaths(target: String) async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let response = try await Client.send("GET", "\(target)?code=c&state=\(request.state)", to: listener)
            #expect(response.status == 404)
            #expect(response.header("Connection") == "close")
            let done = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener)
            #expect(done.status == 200)
            _ = try await waiting.value
        }
    }

    @Test("other methods get 405 with Allow: GET, HEAD", arguments: ["POST", "PUT", "DELETE", "OPTIONS"])
    func otherMethods(method: String) async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let response = try await Client.send(
                method, "/callback?code=c&state=\(request.state)", to: listener, extra: ["Content-Length: 0"]
            )
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD")
            let done = try await Client.send("GET", "/callback?code=c&state=\(request.state)", to: listener)
            #expect(done.status == 200)
            _ = try await waiting.value
        }
    }

    @Test("a Host that is not the listener's gets 400 and is ignored (DNS rebinding)")
    func foreignHost() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let target = "/callback?code=c&state=\(request.state)"
            for host in ["evil.example:\(listener.port)", "evil.example", "127.0.0.1:\(listener.port + 1)", "127.0.0.1", "[::1]:\(listener.port)"] {
                let response = try await Client.send("GET", target, to: listener, host: host)
                #expect(response.status == 400, "\(host)")
            }
            let noHost = try await Client.exchange("127.0.0.1", listener.port, Client.request("GET", target, host: nil))
            #expect(noHost.status == 400)
            let twoHosts = try await Client.send("GET", target, to: listener, extra: ["Host: evil.example"])
            #expect(twoHosts.status == 400)
            let start = try await Client.send("GET", listener.startURL.path, to: listener, host: "evil.example")
            #expect(start.status == 400)
            #expect(start.header("Location") == nil)
            let viaLocalhost = try await Client.send("GET", target, to: listener, host: "LOCALHOST:\(listener.port)")
            #expect(viaLocalhost.status == 200)
            _ = try await waiting.value
        }
    }

    @Test("HTTP/1.0 gets 505, a body on GET 400, an 8 KiB target 414, and the wait goes on")
    func malformedRequests() async throws {
        try await withListener { listener in
            let request = try Self.request(for: listener)
            let waiting = try await Self.startWaiting(listener, request)
            let target = "/callback?code=c&state=\(request.state)"
            let old = try await Client.exchange(
                "127.0.0.1", listener.port, Client.request("GET", target, host: "127.0.0.1:\(listener.port)", version: "HTTP/1.0")
            )
            #expect(old.status == 505)
            let withBody = try await Client.send("GET", target, to: listener, extra: ["Content-Length: 0", "Content-Length: 5"])
            #expect(withBody.status == 400)
            let chunked = try await Client.send("GET", target, to: listener, extra: ["Transfer-Encoding: chunked"])
            #expect(chunked.status == 400)
            let long = try await Client.send("GET", target + "&pad=" + String(repeating: "a", count: 8200), to: listener)
            #expect(long.status == 414)
            let garbage = try await Client.exchange("127.0.0.1", listener.port, Array("NOT HTTP AT ALL\r\n\r\n".utf8))
            #expect(garbage.status == 400)
            let done = try await Client.send("GET", target, to: listener)
            #expect(done.status == 200)
            _ = try await waiting.value
        }
    }

    // MARK: Helpers

    static func request(for listener: LoopbackRedirectListener) throws -> AuthorizationRequest {
        try AuthorizationRequest(
            authorizationEndpoint: try #require(URL(string: "https://idp.example/authorize")), clientID: "c",
            redirectURI: listener.redirectURI, issuer: "https://idp.example"
        )
    }

    /// Serves `request` and starts the wait in a task; returns once the wait is in progress.
    static func startWaiting(
        _ listener: LoopbackRedirectListener, _ request: AuthorizationRequest, timeout: Duration? = .scaled(.seconds(30))
    ) async throws -> Task<AuthorizationResponse, any Error> {
        try listener.serve(request)
        let task = Task { try await listener.waitForAuthorization(request, timeout: timeout) }
        for _ in 0..<TestTime.scaled(500) {
            if listener.isWaiting { return task }
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        throw RawHTTPClient.Failure(description: "The wait did not start within \(TestTime.scaled(5)) s")
    }

    /// Starts a listener, runs `body`, and closes the listener whatever happens.
    func withListener(
        _ configuration: LoopbackRedirectListener.Configuration = .init(), _ body: (LoopbackRedirectListener) async throws -> Void
    ) async throws {
        try await Self.withListener(configuration, body)
    }

    /// Starts a listener, runs `body`, and closes the listener whatever happens.
    static func withListener(
        _ configuration: LoopbackRedirectListener.Configuration = .init(), _ body: (LoopbackRedirectListener) async throws -> Void
    ) async throws {
        let listener = try await LoopbackRedirectListener.start(configuration)
        do {
            try await body(listener)
        } catch {
            await listener.close()
            throw error
        }
        await listener.close()
    }

    static func get(_ url: URL) async throws -> HTTPResponse {
        try await withNIOHTTPTransport(configuration: .init(maximumIdleConnectionsPerHost: 0)) { transport in
            try await transport.send(HTTPRequest(url: url), options: HTTPRequestOptions(timeout: .scaled(.seconds(10)), followRedirects: false))
        }
    }

    static func expectSecurityHeaders(_ headers: HTTPHeaders, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(headers["Content-Type"] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        #expect(headers["Cache-Control"] == "no-store", sourceLocation: sourceLocation)
        #expect(headers["Pragma"] == "no-cache", sourceLocation: sourceLocation)
        #expect(headers["Referrer-Policy"] == "no-referrer", sourceLocation: sourceLocation)
        #expect(headers["X-Content-Type-Options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(headers["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'", sourceLocation: sourceLocation)
        #expect(headers["Connection"] == "close", sourceLocation: sourceLocation)
    }
}
