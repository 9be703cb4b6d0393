import Foundation
import HTTPTypes
import Hummingbird
import OIDC
import OIDCResourceServer
import OIDCTesting
@testable import ProtectedAPI
import Testing

/// The API over real loopback HTTP, with access tokens from OIDCTesting's provider, whose keys the
/// kit fetches over loopback HTTP too: the middleware's answers are the kit's, per route.
@Suite("ProtectedAPI: the orders API behind RequireAccess", .timeLimit(.minutes(1)))
struct ProtectedAPITests {
    struct Harness {
        let provider: TestProvider
        let transport: NIOHTTPTransport
        let base: String
        let clock: TestClock

        var resource: String { base + "/" }

        func send(_ method: String, _ path: String, _ headers: OIDC.HTTPHeaders = [:], body: String? = nil) async throws -> OIDC.HTTPResponse {
            var headers = headers
            if body != nil { headers.add("Content-Type", "application/json") }
            let url = try #require(URL(string: base + path))
            return try await transport.send(OIDC.HTTPRequest(method: method, url: url, headers: headers, body: Array((body ?? "").utf8)))
        }

        func token(scope: String, key: DPoPKey? = nil) async throws -> String {
            try await provider.issueJWTAccessToken(audience: resource, scope: scope, dpopKeyThumbprint: key?.thumbprint)
        }

        /// `Authorization: DPoP` with a new proof for `method` and `url` (by default, this API's `path`).
        func dpop(_ token: String, _ key: DPoPKey, _ method: String, _ path: String, url: String? = nil, nonce: String? = nil) throws -> OIDC.HTTPHeaders {
            let proof = try key.proof(method: method, url: try #require(URL(string: url ?? base + path)), accessToken: Secret(token), nonce: nonce, now: clock.now)
            return ["Authorization": "DPoP " + token, "DPoP": proof]
        }
    }

    /// The provider, the API on a loopback port (`resourcePath` appended to its resource
    /// identifier), and a client; `configure` adjusts the kit's configuration.
    func withAPI(
        resourcePath: String = "/", publicOrigin: URL? = nil, configure: (inout ResourceServer.Configuration) throws -> Void = { _ in },
        _ body: @escaping @Sendable (Harness) async throws -> Void
    ) async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                // The port is reserved, released, then bound: a connection of a test running beside
                // may take it in between (EADDRINUSE). Then another port.
                for attempt in 1...5 {
                    let port = try reserveLoopbackPort()
                    let clock = TestClock()
                    let base = "http://127.0.0.1:\(port)"
                    var configuration = ResourceServer.Configuration(
                        resource: try #require(URL(string: base + resourcePath)),
                        issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: try #require(URL(string: provider.jwksURI)), transport: transport)]
                    )
                    configuration.scopesSupported = OrdersAPI.scopes
                    configuration.now = { clock.now }
                    configuration.publicOrigin = publicOrigin
                    try configure(&configuration)
                    let router = OrdersAPI.router(server: try ResourceServer(configuration))
                    do {
                        try await serve(router, port: port) {
                            try await body(Harness(provider: provider, transport: transport, base: base, clock: clock))
                        }
                        return
                    } catch where attempt < 5 && String(describing: error).contains("Address already in use") && String(describing: error).contains("bind(") {
                        continue
                    }
                }
            }
        }
    }

    static func json(_ response: OIDC.HTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test("the RFC 9728 metadata at the well-known path, without a token")
    func metadata() async throws {
        try await withAPI { api in
            let response = try await api.send("GET", "/.well-known/oauth-protected-resource")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "application/json")
            let document = try Self.json(response)
            #expect(document["resource"] as? String == api.resource)
            #expect(document["authorization_servers"] as? [String] == [api.provider.issuer])
            #expect(document["scopes_supported"] as? [String] == OrdersAPI.scopes)
            #expect((document["dpop_signing_alg_values_supported"] as? [String])?.contains("ES256") == true)
        }
    }

    @Test("a resource with a path has its metadata at the path-inserted URL (RFC 9728 §3.1)")
    func pathInsertedMetadata() async throws {
        try await withAPI(resourcePath: "/orders-api") { api in
            let response = try await api.send("GET", "/.well-known/oauth-protected-resource/orders-api")
            #expect(response.status == 200)
            #expect(try Self.json(response)["resource"] as? String == api.base + "/orders-api")
            #expect(try await api.send("GET", "/.well-known/oauth-protected-resource").status == 404)
        }
    }

    @Test("no token: 401 with a Bearer and a DPoP challenge naming the route's scope and the metadata, and no error code (RFC 6750 §3.1)")
    func noToken() async throws {
        try await withAPI { api in
            let response = try await api.send("GET", "/orders")
            #expect(response.status == 401)
            let challenges = response.headers.values("WWW-Authenticate")
            let metadata = "resource_metadata=\"\(api.base)/.well-known/oauth-protected-resource\""
            // The route's scope is named (RFC 6750 §3), so a client asks for it when it logs in.
            #expect(challenges.contains("Bearer scope=\"orders:read\", " + metadata), "\(challenges)")
            #expect(challenges.contains { $0.hasPrefix("DPoP scope=\"orders:read\", algs=\"") && $0.hasSuffix(metadata) }, "\(challenges)")
            #expect(!challenges.contains { $0.contains("error=") })
        }
    }

    @Test("a bearer token: its scopes open GET /orders and /me, and POST /orders is 403 insufficient_scope naming the scope")
    func bearerScopes() async throws {
        try await withAPI { api in
            let token = try await api.token(scope: "orders:read")
            let list = try await api.send("GET", "/orders", ["Authorization": "Bearer " + token])
            #expect(list.status == 200)
            #expect(try Self.json(list)["orders"] as? [Any] != nil)
            let me = try Self.json(try await api.send("GET", "/me", ["Authorization": "Bearer " + token]))
            #expect(me["sub"] as? String == (await api.provider.user).subject)
            #expect(me["client_id"] as? String == TestProvider.Client.default.id)
            #expect(me["token_type"] as? String == "Bearer")

            let post = try await api.send("POST", "/orders", ["Authorization": "Bearer " + token], body: #"{"item":"tea"}"#)
            #expect(post.status == 403)
            let challenge = try #require(post.headers.values("WWW-Authenticate").first)
            #expect(challenge.hasPrefix("Bearer error=\"insufficient_scope\""))
            #expect(challenge.contains("scope=\"orders:write\""))
            #expect(try Self.json(post)["error"] as? String == "insufficient_scope")
            #expect(post.headers["Content-Type"] == "application/json")
        }
    }

    @Test("a token for another audience, or tampered: 401 invalid_token, and the token never in the answer")
    func refusedTokens() async throws {
        try await withAPI { api in
            let other = try await api.provider.issueJWTAccessToken(audience: "https://other.example/", scope: "orders:read")
            let tampered = String(try await api.token(scope: "orders:read").dropLast(2)) + "AA"
            for token in [other, tampered] {
                let response = try await api.send("GET", "/orders", ["Authorization": "Bearer " + token])
                #expect(response.status == 401)
                #expect(response.headers.values("WWW-Authenticate").first?.hasPrefix("Bearer error=\"invalid_token\"") == true)
                let answer = response.headers.values("WWW-Authenticate").joined() + String(decoding: response.body, as: UTF8.self)
                #expect(!answer.contains(String(token.split(separator: ".")[1])))
            }
        }
    }

    @Test("a DPoP-bound token with its proof: GET and POST per scope, token_type DPoP, and the order listed after")
    func dpop() async throws {
        try await withAPI { api in
            let key = try DPoPKey.generate(.es256)
            let token = try await api.token(scope: "orders:read orders:write", key: key)
            let post = try await api.send("POST", "/orders", try api.dpop(token, key, "POST", "/orders"), body: #"{"item":"a pot of tea"}"#)
            #expect(post.status == 201)
            let created = try Self.json(post)
            let list = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/orders"))
            #expect(list.status == 200)
            let orders = try #require(try Self.json(list)["orders"] as? [[String: String]])
            #expect(orders == [["id": try #require(created["id"] as? String), "item": "a pot of tea"]])
            #expect(try Self.json(try await api.send("GET", "/me", try api.dpop(token, key, "GET", "/me")))["token_type"] as? String == "DPoP")
        }
    }

    @Test("DPoP refusals: a replayed proof, a proof for another URL, the bound token as Bearer; each 401 with its DPoP challenge")
    func dpopRefusals() async throws {
        try await withAPI { api in
            let key = try DPoPKey.generate(.es256)
            let token = try await api.token(scope: "orders:read", key: key)
            let headers = try api.dpop(token, key, "GET", "/orders")
            #expect(try await api.send("GET", "/orders", headers).status == 200)
            let replayed = try await api.send("GET", "/orders", headers)
            let forMe = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/me"))
            for response in [replayed, forMe] {
                #expect(response.status == 401)
                #expect(response.headers.values("WWW-Authenticate").first?.hasPrefix("DPoP error=\"invalid_dpop_proof\"") == true)
            }
            let asBearer = try await api.send("GET", "/orders", ["Authorization": "Bearer " + token])
            #expect(asBearer.status == 401)
            #expect(asBearer.headers.values("WWW-Authenticate").first?.hasPrefix("DPoP error=\"invalid_token\"") == true)
        }
    }

    @Test("server nonces: use_dpop_nonce with DPoP-Nonce, accepted with it, and a rotated nonce sent with the 200")
    func nonces() async throws {
        let nonces = try DPoPServerNonces(lifetime: 300)
        try await withAPI(configure: { $0.dpop.nonces = nonces }) { api in
            let key = try DPoPKey.generate(.es256)
            let token = try await api.token(scope: "orders:read", key: key)
            let challenge = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/orders"))
            #expect(challenge.status == 401)
            #expect(challenge.headers.values("WWW-Authenticate").first?.hasPrefix("DPoP error=\"use_dpop_nonce\"") == true)
            let nonce = try #require(challenge.headers["DPoP-Nonce"])
            let accepted = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/orders", nonce: nonce))
            #expect(accepted.status == 200)
            #expect(accepted.headers["DPoP-Nonce"] == nil)

            api.clock.advance(by: 300)  // the nonce is now the previous window's: still good, and the next one is announced
            let rotated = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/orders", nonce: nonce))
            #expect(rotated.status == 200)
            #expect(rotated.headers["DPoP-Nonce"] == nonces.current(at: api.clock.now))
            #expect(rotated.headers["DPoP-Nonce"] != nonce)
        }
    }

    @Test("behind a proxy: with publicOrigin, proofs name the public URL and a proof for the backend's URL is refused")
    func publicOrigin() async throws {
        let origin = try #require(URL(string: "https://api.example"))
        try await withAPI(publicOrigin: origin) { api in
            let key = try DPoPKey.generate(.es256)
            let token = try await api.token(scope: "orders:read", key: key)
            let proxied = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/orders", url: "https://api.example/orders"))
            #expect(proxied.status == 200)
            let backend = try await api.send("GET", "/orders", try api.dpop(token, key, "GET", "/orders"))
            #expect(backend.status == 401)
        }
    }

    @Test("the URL a proof is checked against is the kit's: X-Forwarded-Host and Forwarded are not read")
    func addressedURL() async throws {
        try await withAPI { api in
            let key = try DPoPKey.generate(.es256)
            let token = try await api.token(scope: "orders:read", key: key)
            var forwarded = try api.dpop(token, key, "GET", "/orders")
            forwarded.add("X-Forwarded-Host", "evil.example")
            forwarded.add("X-Forwarded-Proto", "https")
            forwarded.add("Forwarded", "host=evil.example;proto=https")
            #expect(try await api.send("GET", "/orders", forwarded).status == 200)
        }
    }
}

/// The kit's clock in these tests: moved by hand, never by waiting.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date()

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}
