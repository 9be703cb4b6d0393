import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

@Suite("NIOHTTPTransport", .timeLimit(.scaledMinutes(1)))
struct NIOHTTPTransportTests {
    // MARK: Plain http

    @Test("fetches the discovery document over plain http")
    func discoveryOverHTTP() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let response = try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
                #expect(response.status == 200)
                #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
                let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                #expect(json?["issuer"] as? String == provider.issuer)
            }
        }
    }

    @Test("a token-endpoint 400 is a response, not an error")
    func tokenErrorIsAResponse() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let form = "grant_type=authorization_code&code=nope&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&client_id=test-client&code_verifier=\(String(repeating: "a", count: 43))"
                let response = try await transport.send(
                    HTTPRequest(
                        method: "POST", url: URL(string: provider.tokenEndpoint)!,
                        headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array(form.utf8)
                    )
                )
                #expect(response.status == 400)
                let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                #expect(json?["error"] as? String == "invalid_grant")
                #expect(await provider.grantCount("authorization_code") == 1)
            }
        }
    }

    @Test("sends Host, User-Agent, Content-Length and the caller's headers")
    func requestHead() async throws {
        try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 204)) }) { server in
            try await withNIOHTTPTransport(configuration: .init(userAgent: "test-agent/1")) { transport in
                _ = try await transport.send(
                    HTTPRequest(
                        method: "post", url: server.url("/a%20b/c?x=1&y=%2F"), headers: ["X-Custom": "yes", "Content-Length": "999"],
                        body: Array("k=v".utf8)
                    )
                )
                let seen = try #require(server.requests.first)
                #expect(seen.method == "POST")
                #expect(seen.uri == "/a%20b/c?x=1&y=%2F")
                let fields = Dictionary(seen.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
                #expect(fields["host"] == "127.0.0.1:\(server.port)")
                #expect(fields["user-agent"] == "test-agent/1")
                #expect(fields["content-length"] == "3")
                #expect(fields["x-custom"] == "yes")
                #expect(seen.headers.filter { $0.name.lowercased() == "content-length" }.count == 1)
            }
        }
    }

    @Test("only http and https URLs are sent", arguments: ["ftp://127.0.0.1/x", "file:///etc/passwd", "mailto:a@b.c"])
    func otherSchemesRefused(url: String) async throws {
        let error = await #expect(throws: OIDCError.self) {
            try await NIOHTTPTransport.shared.send(HTTPRequest(url: URL(string: url)!))
        }
        #expect(error?.code == .invalidArgument)
    }

    // MARK: Failures

    @Test("connection refused is a networkFailure naming the host")
    func connectionRefused() async throws {
        // Port 1 (tcpmux) listens nowhere here; a port freed by a server of this test could be taken
        // again at once by another test running in parallel.
        let port = 1
        let error = await #expect(throws: OIDCError.self) {
            try await NIOHTTPTransport.shared.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
        }
        #expect(error?.code == .networkFailure)
        #expect(error?.category == .transient)
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
    }

    @Test("a server that never answers times out within the timeout")
    func neverAnswers() async throws {
        try await withRawHTTPServer({ _ in .never }) { server in
            let start = ContinuousClock.now
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: server.url()), options: .init(timeout: .milliseconds(300)))
            }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .timedOut)
            #expect(elapsed >= .milliseconds(290))
            // The deadline fires on the event loop at 300 ms; the bound is loose because the waiting
            // task resumes on the cooperative pool, which the suite's CPU-bound tests keep busy.
            #expect(elapsed < .scaled(.seconds(30)))
        }
    }

    @Test("a body over the limit is refused: declared by Content-Length")
    func oversizedDeclared() async throws {
        try await withTestProvider { provider in
            await provider.failNextRequests(1, to: .discovery, with: .oversizedBody(byteCount: 2 * 1024 * 1024))
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
            }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test("a body over the limit is refused while reading: chunked without a length")
    func oversizedChunked() async throws {
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 16 * 1024)
        var bytes = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<64 { bytes += Array("4000\r\n".utf8) + chunk + Array("\r\n".utf8) }
        bytes += Array("0\r\n\r\n".utf8)
        let reply = bytes
        try await withRawHTTPServer({ _ in .bytes(reply) }) { server in
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: server.url()), options: .init(maximumResponseSize: 100_000))
            }
            #expect(error?.code == .responseTooLarge)
            // Under the limit the same body is fine.
            let response = try await NIOHTTPTransport.shared.send(
                HTTPRequest(url: server.url()), options: .init(maximumResponseSize: 2 * 1024 * 1024)
            )
            #expect(response.body.count == 64 * 16 * 1024)
        }
    }

    @Test("a body cut off before its Content-Length is a networkFailure")
    func truncatedBody() async throws {
        let reply = RawHTTPServer.response(status: 200, [("Content-Length", "100")], body: Array("{\"issuer\":".utf8))
        try await withRawHTTPServer({ _ in .bytes(reply, thenClose: true) }) { server in
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: server.url()))
            }
            #expect(error?.code == .networkFailure)
        }
    }

    @Test("a chunked body cut off is a networkFailure")
    func truncatedChunked() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789".utf8)
        try await withRawHTTPServer({ _ in .bytes(reply, thenClose: true) }) { server in
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: server.url()))
            }
            #expect(error?.code == .networkFailure)
        }
    }

    @Test("a dropped connection is a networkFailure")
    func droppedConnection() async throws {
        try await withTestProvider { provider in
            await provider.failNextRequests(1, to: .discovery, with: .dropConnection)
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
            }
            #expect(error?.code == .networkFailure)
        }
    }

    @Test("a body read until the server closes is complete")
    func bodyUntilClose() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it".utf8)
        try await withRawHTTPServer({ _ in .bytes(reply, thenClose: true) }) { server in
            let response = try await NIOHTTPTransport.shared.send(HTTPRequest(url: server.url()))
            #expect(String(decoding: response.body, as: UTF8.self) == "all of it")
        }
    }

    // MARK: Redirects

    @Test("3xx is returned as a response unless redirects are followed")
    func redirects() async throws {
        try await withRawHTTPServer({ request in
            switch request.uri {
            case "/start": .bytes(RawHTTPServer.response(status: 302, [("Location", "/middle")]))
            case "/middle": .bytes(RawHTTPServer.response(status: 307, [("Location", "/end?x=1")]))
            case "/loop": .bytes(RawHTTPServer.response(status: 301, [("Location", "/loop")]))
            default: .bytes(RawHTTPServer.response(status: 200, body: Array("end \(request.uri)".utf8)))
            }
        }) { server in
            let transport = NIOHTTPTransport.shared
            let notFollowed = try await transport.send(HTTPRequest(url: server.url("/start")))
            #expect(notFollowed.status == 302)
            #expect(notFollowed.headers["location"] == "/middle")

            let followed = try await transport.send(HTTPRequest(url: server.url("/start")), options: .init(followRedirects: true))
            #expect(followed.status == 200)
            #expect(String(decoding: followed.body, as: UTF8.self) == "end /end?x=1")

            let post = try await transport.send(
                HTTPRequest(method: "POST", url: server.url("/start"), body: Array("code=x".utf8)), options: .init(followRedirects: true)
            )
            #expect(post.status == 302)

            let loop = await #expect(throws: OIDCError.self) {
                try await transport.send(HTTPRequest(url: server.url("/loop")), options: .init(followRedirects: true))
            }
            #expect(loop?.code == .malformedResponse)
            #expect(server.requests.filter { $0.uri == "/loop" }.count == 6)
        }
    }

    @Test("a redirect to another origin drops the Authorization header")
    func redirectDropsCredentials() async throws {
        try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 200)) }) { target in
            let location = target.url("/elsewhere").absoluteString
            try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 302, [("Location", location)])) }) { origin in
                let response = try await NIOHTTPTransport.shared.send(
                    HTTPRequest(url: origin.url("/"), headers: ["Authorization": "Bearer secret-token"]),
                    options: .init(followRedirects: true)
                )
                #expect(response.status == 200)
                #expect(origin.requests.first?.headers.contains { $0.name == "Authorization" } == true)
                let seen = try #require(target.requests.first)
                #expect(!seen.headers.contains { $0.name.lowercased() == "authorization" })
            }
        }
    }

    @Test("a request with a DPoP proof is not redirected: the proof names its URL (htu), so the 3xx comes back to the caller; without a proof the same redirect is followed")
    func redirectNotFollowedWithDPoPProof() async throws {
        try await withRawHTTPServer({ request in
            request.uri == "/start"
                ? .bytes(RawHTTPServer.response(status: 307, [("Location", "/moved")])) : .bytes(RawHTTPServer.response(status: 200))
        }) { server in
            let proven = try await NIOHTTPTransport.shared.send(
                HTTPRequest(url: server.url("/start"), headers: ["Authorization": "DPoP token", "DPoP": "proof-for-start"]),
                options: .init(followRedirects: true)
            )
            #expect(proven.status == 307)
            #expect(server.requests.map(\.uri) == ["/start"])
            let plain = try await NIOHTTPTransport.shared.send(HTTPRequest(url: server.url("/start")), options: .init(followRedirects: true))
            #expect(plain.status == 200)
            #expect(server.requests.map(\.uri) == ["/start", "/start", "/moved"])
        }
    }

    @Test("a redirect from https to http is refused")
    func httpsToHTTPRefused() async throws {
        try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 200)) }) { plain in
            let location = plain.url("/insecure").absoluteString
            try await withRawHTTPServer(tls: (TLSFixtures.serverChainPEM, TLSFixtures.serverKeyPEM), { _ in
                .bytes(RawHTTPServer.response(status: 302, [("Location", location)]))
            }) { secure in
                try await withNIOHTTPTransport(configuration: .init(additionalTrustRootsPEM: [TLSFixtures.caPEM])) { transport in
                    let error = await #expect(throws: OIDCError.self) {
                        try await transport.send(HTTPRequest(url: secure.url("/", scheme: "https")), options: .init(followRedirects: true))
                    }
                    #expect(error?.code == .insecureEndpoint)
                    #expect(plain.requests.isEmpty)
                }
            }
        }
    }

    // MARK: Keep-alive

    @Test("sequential requests reuse one keep-alive connection")
    func keepAlive() async throws {
        try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 200, body: Array("ok".utf8))) }) { server in
            try await withNIOHTTPTransport { transport in
                for _ in 0..<5 { _ = try await transport.send(HTTPRequest(url: server.url())) }
            }
            #expect(server.connectionCount == 1)
            try await withNIOHTTPTransport(configuration: .init(maximumIdleConnectionsPerHost: 0)) { transport in
                for _ in 0..<3 { _ = try await transport.send(HTTPRequest(url: server.url())) }
            }
            #expect(server.connectionCount == 4)
        }
    }

    @Test("Connection: close is honoured, and a kept connection the server closed is replaced", arguments: [true, false])
    func closedKeepAlive(announced: Bool) async throws {
        let fields = announced ? [("Connection", "close")] : []
        try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 200, fields), thenClose: true) }) { server in
            try await withNIOHTTPTransport { transport in
                for _ in 0..<3 {
                    let status = try await transport.send(HTTPRequest(url: server.url())).status
                    #expect(status == 200)
                }
            }
            #expect(server.connectionCount == 3)
        }
    }

    @Test("a shut-down transport refuses requests")
    func shutDown() async throws {
        let transport = NIOHTTPTransport()
        try await transport.shutdown()
        let error = await #expect(throws: OIDCError.self) {
            try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:1/")!))
        }
        #expect(error?.code == .invalidArgument)
    }

    // MARK: Secrets

    @Test("errors never contain an Authorization value or the body")
    func noSecretsInErrors() async throws {
        let secretHeader = "Bearer eyJ-very-secret-access-token"
        let secretBody = Array("client_secret=very-secret-client-secret&refresh_token=very-secret-refresh".utf8)
        func check(_ error: OIDCError?) {
            let text = error.map { "\($0) \($0.context) \($0.localizedDescription)" } ?? ""
            #expect(error != nil)
            #expect(!text.contains("very-secret"))
        }
        try await withRawHTTPServer({ _ in .never }) { server in
            let request = HTTPRequest(method: "POST", url: server.url("/token"), headers: ["Authorization": secretHeader], body: secretBody)
            check(await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(request, options: .init(timeout: .milliseconds(200)))
            })
            var injected = request
            injected.headers.add("X-Smuggle", "very-secret\r\nHost: evil")
            check(await #expect(throws: OIDCError.self) { try await NIOHTTPTransport.shared.send(injected) })
            #expect(server.requests.count == 1)
        }
        try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 200, body: [UInt8](repeating: 65, count: 4096) + secretBody)) }) { server in
            let request = HTTPRequest(method: "POST", url: server.url("/token"), headers: ["Authorization": secretHeader], body: secretBody)
            check(await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(request, options: .init(maximumResponseSize: 100))
            })
        }
        let refused = try await RawHTTPServer.start { _ in .never }
        let port = refused.port
        try await refused.shutdown()
        check(await #expect(throws: OIDCError.self) {
            try await NIOHTTPTransport.shared.send(
                HTTPRequest(method: "POST", url: URL(string: "http://127.0.0.1:\(port)/")!, headers: ["Authorization": secretHeader], body: secretBody)
            )
        })
    }
}
