import Foundation
import Hummingbird
import OIDC
import OIDCHummingbird
import OIDCResourceServer
import OIDCTestSupport
import OIDCTesting
import Testing

/// A Hummingbird API protected by the middleware product, over real loopback HTTP, with access
/// tokens from TestProvider whose keys the kit fetches over loopback HTTP too.
@Suite("OIDCHummingbird: RequireAccess and the metadata route")
struct RequireAccessTests {
    static let resource = "https://api.example/orders"

    /// The user's program: a server, a router, a protected group. (The lines an app writes.)
    static func router(_ server: ResourceServer) -> Router<BasicAccessRequestContext> {
        let router = Router(context: BasicAccessRequestContext.self)
        router.addProtectedResourceMetadata(server)
        router.group("orders").add(middleware: RequireAccess(server, scopes: ["orders:read"]))
            .get { _, context in try context.verifiedAccess.subject ?? "nobody" }
        router.group("admin").add(middleware: RequireAccess(server, scopes: ["orders:admin"])).get { _, _ in "admin" }
        router.get("open") { _, context in context.access == nil ? "open" : "?" }
        return router
    }

    static func withAPI(
        _ configure: (inout ResourceServer.Configuration) throws -> Void = { _ in },
        _ body: (TestProvider, String, ResourceServer) async throws -> Void
    ) async throws {
        try await withTestProvider { provider in
            var configuration = ResourceServer.Configuration(
                resource: URL(string: resource)!,
                issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: URL(string: provider.jwksURI)!, transport: NIOHTTPTransport.shared)])
            configuration.scopesSupported = ["orders:read", "orders:admin"]
            try configure(&configuration)
            let server = try ResourceServer(configuration)
            try await serve(router(server)) { base in try await body(provider, base, server) }
        }
    }

    static func send(_ url: String, _ headers: OIDC.HTTPHeaders = [:]) async throws -> OIDC.HTTPResponse {
        try await NIOHTTPTransport.shared.send(OIDC.HTTPRequest(url: try #require(URL(string: url)), headers: headers))
    }

    @Test("a bearer token opens its route; none is 401 with both challenges naming the metadata; a missing scope 403; the metadata route is open")
    func bearer() async throws {
        try await Self.withAPI { provider, base, _ in
            let token = try await provider.issueJWTAccessToken(audience: Self.resource, scope: "orders:read")
            let ok = try await Self.send(base + "/orders", ["Authorization": "Bearer " + token])
            #expect(ok.status == 200 && String(decoding: ok.body, as: UTF8.self) == "test-user")
            let none = try await Self.send(base + "/orders")
            #expect(none.status == 401)
            let metadata = "resource_metadata=\"https://api.example/.well-known/oauth-protected-resource/orders\""
            #expect(none.headers.values("WWW-Authenticate").first == #"Bearer scope="orders:read", "# + metadata)
            #expect(none.headers.values("WWW-Authenticate").count == 2)
            let admin = try await Self.send(base + "/admin", ["Authorization": "Bearer " + token])
            #expect(admin.status == 403 && admin.headers["WWW-Authenticate"]?.contains(#"error="insufficient_scope""#) == true)
            #expect(admin.headers["Content-Type"] == "application/json")
            #expect(!String(decoding: admin.body, as: UTF8.self).contains(token))
            #expect(try await Self.send(base + "/open").status == 200)
            let posted = try await NIOHTTPTransport.shared.send(OIDC.HTTPRequest(method: "POST", url: try #require(URL(string: base + "/.well-known/oauth-protected-resource/orders"))))
            #expect(posted.status == 405 && posted.headers["Allow"] == "GET")
            let document = try await Self.send(base + "/.well-known/oauth-protected-resource/orders")
            #expect(document.status == 200)
            let json = try JSONSerialization.jsonObject(with: Data(document.body)) as? [String: Any]
            #expect(json?["resource"] as? String == Self.resource)
            #expect(json?["authorization_servers"] as? [String] == [provider.issuer])
        }
    }

    @Test("a DPoP-bound token under server nonces: use_dpop_nonce, then accepted with the nonce; the proof for the URL as addressed")
    func dpopWithNonces() async throws {
        let nonces = try DPoPServerNonces()
        try await Self.withAPI({ $0.dpop.nonces = nonces }) { provider, base, _ in
            let key = try DPoPKey.generate()
            let token = try await provider.issueJWTAccessToken(audience: Self.resource, scope: "orders:read", dpopKeyThumbprint: key.thumbprint)
            let url = try #require(URL(string: base + "/orders"))
            let first = try await Self.send(base + "/orders", ["Authorization": "DPoP " + token, "DPoP": try key.proof(method: "GET", url: url, accessToken: Secret(token))])
            #expect(first.status == 401 && first.headers["WWW-Authenticate"]?.contains(#"error="use_dpop_nonce""#) == true)
            let nonce = try #require(first.headers["DPoP-Nonce"])
            let second = try await Self.send(
                base + "/orders", ["Authorization": "DPoP " + token, "DPoP": try key.proof(method: "GET", url: url, accessToken: Secret(token), nonce: nonce)])
            #expect(second.status == 200, "\(second.status) \(String(decoding: second.body, as: UTF8.self))")
            // A proof for another URL than the one addressed.
            let elsewhere = try #require(URL(string: "https://api.example/orders"))
            let wrong = try await Self.send(
                base + "/orders", ["Authorization": "DPoP " + token, "DPoP": try key.proof(method: "GET", url: elsewhere, accessToken: Secret(token), nonce: nonce)])
            #expect(wrong.status == 401 && wrong.headers["WWW-Authenticate"]?.contains(#"error="invalid_dpop_proof""#) == true)
        }
    }

    @Test("two Host fields: 400 invalid_request; an absolute-form target's other host is dropped by Hummingbird, never used for htu; X-Forwarded-Host is not read")
    func hostileAddressing() async throws {
        try await Self.withAPI { provider, base, _ in
            let key = try DPoPKey.generate()
            let token = try await provider.issueJWTAccessToken(audience: Self.resource, scope: "orders:read", dpopKeyThumbprint: key.thumbprint)
            func proved(_ url: String) throws -> [String] {
                ["Authorization: DPoP " + token, "DPoP: " + (try key.proof(method: "GET", url: try #require(URL(string: url)), accessToken: Secret(token)))]
            }
            let port = try #require(URL(string: base)?.port)
            let host = "127.0.0.1:\(port)"
            let twoHosts = try await RawHTTPClient.exchange("127.0.0.1", port, RawHTTPClient.request("GET", "/orders", host: host, extra: try proved(base + "/orders") + ["Host: evil.example"]))
            #expect(twoHosts.status == 400, "\(twoHosts.status)")
            #expect(try twoHosts.json()["error"] as? String == "invalid_request")
            // A proof captured for another server, replayed in absolute-form naming that server: the
            // URL the kit checks is still this one's (Host), so the proof does not fit.
            let replayed = try await RawHTTPClient.exchange(
                "127.0.0.1", port, RawHTTPClient.request("GET", "http://evil.example/orders", host: host, extra: try proved("http://evil.example/orders")))
            #expect(replayed.status == 401 && replayed.header("WWW-Authenticate")?.contains(#"error="invalid_dpop_proof""#) == true, "\(replayed.status)")
            let forwarded = try await RawHTTPClient.exchange(
                "127.0.0.1", port, RawHTTPClient.request("GET", "/orders", host: host, extra: try proved(base + "/orders") + ["X-Forwarded-Host: evil.example", "X-Forwarded-Proto: https"]))
            #expect(forwarded.status == 200, "\(forwarded.status)")
        }
    }
}
