import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

/// The URL the client addressed, built by the kit alone (RFC 9449 §4.3's `htu`, RFC 9112 §3.2's
/// `Host` rules): what every framework integration calls instead of building it.
@Suite("The addressed URL: one rule for htu")
struct AddressedURLTests {
    static func headers(_ fields: [(String, String)]) -> HTTPHeaders { HTTPHeaders(fields) }

    /// The rule and status `server.request` refuses with; fails the test when it builds one.
    static func refusal(_ server: ResourceServer, target: String, authority: String? = nil, _ fields: [(String, String)], scheme: String = "http") -> AccessRefusal? {
        do {
            let request = try server.request(method: "GET", target: target, authority: authority, headers: headers(fields), scheme: scheme)
            Issue.record("built \(request.url) for \(target) with \(fields)")
            return nil
        } catch {
            return error
        }
    }

    @Test("origin-form on the connection's scheme and the one Host (or :authority); Forwarded and X-Forwarded-* never read")
    func fromHost() async throws {
        try await ResourceFixture.run { fixture in
            let server = fixture.server
            let forged = [("Forwarded", "host=evil.example;proto=https"), ("X-Forwarded-Host", "evil.example"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Port", "8443")]
            let plain = try server.request(method: "GET", target: "/orders/42?page=2", headers: Self.headers([("Host", "api.example:8080")] + forged))
            #expect(plain.url.absoluteString == "http://api.example:8080/orders/42?page=2")
            let tls = try server.request(method: "POST", target: "/orders", authority: "API.example", headers: Self.headers(forged), scheme: "https")
            #expect(tls.url.absoluteString == "https://API.example/orders" && tls.method == "POST")
            let literal = try server.request(method: "GET", target: "/", headers: Self.headers([("host", "[::1]:9000")]))
            #expect(literal.url.absoluteString == "http://[::1]:9000/")
            // Absolute-form naming this very origin is taken (RFC 9112 §3.2.2); its path and query kept.
            let absolute = try server.request(method: "GET", target: "HTTP://api.example:8080/orders?x=1", headers: Self.headers([("Host", "api.example:8080")]))
            #expect(absolute.url.absoluteString == "http://api.example:8080/orders?x=1")
        }
    }

    @Test("two Host fields (or Host and :authority), a Host that is not host[:port], or none: 400 malformed_host", arguments: [
        [("Host", "api.example"), ("Host", "api.example")], [("Host", "api.example"), ("host", "evil.example")],
        [("Host", "api.example/evil")], [("Host", "user@api.example")], [("Host", "api example")], [("Host", "api.example:99999")],
        [("Host", "api.example:")], [("Host", "")], [("Host", "[::1")], [("Host", "api.example:80:80")], [],
    ])
    func badHost(fields: [(String, String)]) async throws {
        try await ResourceFixture.run { fixture in
            let refusal = Self.refusal(fixture.server, target: "/orders", fields)
            #expect(refusal?.rule == .malformedHost && refusal?.status == 400 && refusal?.error == "invalid_request", "\(String(describing: refusal))")
        }
    }

    @Test("Hummingbird's authority plus a second Host field is two Hosts")
    func authorityAndHost() async throws {
        try await ResourceFixture.run { fixture in
            let refusal = Self.refusal(fixture.server, target: "/orders", authority: "api.example", [("Host", "api.example")])
            #expect(refusal?.rule == .malformedHost)
        }
    }

    @Test("an absolute-form target for another host, the asterisk and authority forms, a fragment, a control or non-ASCII byte, 8 KiB: 400 malformed_request_target", arguments: [
        "http://evil.example/orders", "https://api.example:8080/orders", "http://api.example:8081/orders", "http://api.example:8080@evil.example/orders",
        "*", "api.example:8080", "/orders#frag", "/orders\u{7F}", "/ordérs", "/orders x", "", "ftp://api.example:8080/orders",
        "/" + String(repeating: "a", count: 8_192),
    ])
    func badTarget(target: String) async throws {
        try await ResourceFixture.run { fixture in
            let refusal = Self.refusal(fixture.server, target: target, [("Host", "api.example:8080")])
            #expect(refusal?.rule == .malformedRequestTarget && refusal?.status == 400, "\(target.prefix(60)): \(String(describing: refusal))")
        }
    }

    @Test("behind a proxy: the public origin, whatever Host and X-Forwarded-Host say; a DPoP proof for the public URL verifies")
    func publicOrigin() async throws {
        try await ResourceFixture.run({ $0.publicOrigin = URL(string: "https://api.example/")! }) { fixture in
            let server = fixture.server
            let proxied = try server.request(method: "GET", target: "/orders/42", headers: Self.headers([("Host", "10.0.0.7:8080"), ("X-Forwarded-Host", "evil.example")]))
            #expect(proxied.url.absoluteString == ResourceFixture.target)
            // No Host at all (HTTP/1.0, or HTTP/2 without :authority) is fine when the origin is configured.
            #expect(try server.request(method: "GET", target: "/orders/42", headers: Self.headers([])).url.absoluteString == ResourceFixture.target)
            // An absolute-form target must name the public origin then.
            #expect(Self.refusal(server, target: "http://10.0.0.7:8080/orders/42", [("Host", "10.0.0.7:8080")])?.rule == .malformedRequestTarget)
            #expect(Self.refusal(server, target: "/orders/42", [("Host", "a"), ("Host", "b")])?.rule == .malformedHost)

            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            let proof = try key.proof(method: "GET", url: URL(string: ResourceFixture.target)!, accessToken: Secret(token), nonce: nil, now: fixture.clock.now())
            let request = try server.request(
                method: "GET", target: "/orders/42", headers: Self.headers([("Host", "10.0.0.7:8080"), ("Authorization", "DPoP " + token), ("DPoP", proof)]))
            #expect(try await server.verify(request).binding.keyThumbprint == key.thumbprint)
            // Without the public origin, the same request addresses the backend, which the proof does not name.
            var direct = server.configuration
            direct.publicOrigin = nil
            let backend = try ResourceServer(direct)
            let unproxied = try backend.request(
                method: "GET", target: "/orders/42", headers: Self.headers([("Host", "10.0.0.7:8080"), ("Authorization", "DPoP " + token), ("DPoP", proof)]))
            #expect(unproxied.url.absoluteString == "http://10.0.0.7:8080/orders/42")
            let refused = try await fixture.refusal(unproxied)
            #expect(refused.status == 401 && refused.error == "invalid_dpop_proof", "\(refused)")
        }
    }

    @Test("a public origin that is not an origin is refused when the server is made", arguments: [
        "https://api.example/v1", "https://api.example/?x=1", "ftp://api.example", "https://user@api.example",
    ])
    func badPublicOrigin(origin: String) async throws {
        try await ResourceFixture.run { fixture in
            var configuration = fixture.server.configuration
            configuration.publicOrigin = try #require(URL(string: origin))
            let error = #expect(throws: OIDCError.self) { try ResourceServer(configuration) }
            #expect(error?.code == .invalidArgument && error?.message.contains("public origin") == true, "\(String(describing: error))")
        }
    }
}
