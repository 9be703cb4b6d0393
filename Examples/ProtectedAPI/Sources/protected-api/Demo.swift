import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import ProtectedAPI

/// `--demo`: OIDCTesting's provider on 127.0.0.1 issues RFC 9068 access tokens, the API runs
/// beside it with DPoP nonces on, and a client sends what a real one would, refusals included.
/// Each step checks the status it expects, so the demo fails when the API answers otherwise.
enum Demo {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    static func run() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let port = try reserveLoopbackPort()
                let base = "http://127.0.0.1:\(port)"
                var configuration = ResourceServer.Configuration(
                    resource: URL(string: base + "/")!,
                    issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: URL(string: provider.jwksURI)!, transport: transport)]
                )
                configuration.scopesSupported = OrdersAPI.scopes
                configuration.dpop.nonces = try DPoPServerNonces()
                let server = try ResourceServer(configuration)
                print("The API on \(base), taking the access tokens of the provider at \(provider.issuer).")
                try await serve(OrdersAPI.router(server: server), port: port) {
                    try await walkThrough(base: base, provider: provider, transport: transport)
                }
            }
        }
    }

    static func walkThrough(base: String, provider: TestProvider, transport: NIOHTTPTransport) async throws {
        func send(_ step: String, _ method: String, _ path: String, _ headers: HTTPHeaders = [:], expect: Int) async throws -> HTTPResponse {
            var headers = headers
            var body: [UInt8] = []
            if method == "POST" {
                headers.add("Content-Type", "application/json")
                body = Array(#"{"item":"a pot of tea"}"#.utf8)
            }
            let response = try await transport.send(HTTPRequest(method: method, url: URL(string: base + path)!, headers: headers, body: body))
            print("\(step) \(method) \(path) → \(response.status)")
            for challenge in response.headers.values("WWW-Authenticate") { print("   WWW-Authenticate: \(challenge)") }
            if let nonce = response.headers["DPoP-Nonce"] { print("   DPoP-Nonce: \(nonce)") }
            if response.status < 300 { print("   " + String(decoding: response.body, as: UTF8.self)) }
            guard response.status == expect else { throw Unexpected(description: "\(step): \(response.status), expected \(expect)") }
            return response
        }
        let resource = base + "/"
        _ = try await send("1.", "GET", "/.well-known/oauth-protected-resource", expect: 200)
        _ = try await send("2. no token:", "GET", "/orders", expect: 401)

        let bearer = try await provider.issueJWTAccessToken(audience: resource, scope: "orders:read")
        _ = try await send("3. bearer token (orders:read):", "GET", "/orders", ["Authorization": "Bearer " + bearer], expect: 200)
        _ = try await send("4. the same token:", "POST", "/orders", ["Authorization": "Bearer " + bearer], expect: 403)

        let key = try DPoPKey.generate(.es256)
        let bound = try await provider.issueJWTAccessToken(audience: resource, scope: "orders:read orders:write", dpopKeyThumbprint: key.thumbprint)
        func dpop(_ method: String, _ path: String, nonce: String?) throws -> HTTPHeaders {
            let proof = try key.proof(method: method, url: URL(string: base + path)!, accessToken: Secret(bound), nonce: nonce)
            return ["Authorization": "DPoP " + bound, "DPoP": proof]
        }
        let challenge = try await send("5. DPoP-bound token, proof without a nonce:", "POST", "/orders", try dpop("POST", "/orders", nonce: nil), expect: 401)
        let nonce = challenge.headers["DPoP-Nonce"]
        let headers = try dpop("POST", "/orders", nonce: nonce)
        _ = try await send("6. again, with the server's nonce:", "POST", "/orders", headers, expect: 201)
        _ = try await send("7. the same proof replayed:", "POST", "/orders", headers, expect: 401)
        _ = try await send("8. the DPoP-bound token as a bearer token:", "GET", "/orders", ["Authorization": "Bearer " + bound], expect: 401)
        _ = try await send("9. a new proof for GET:", "GET", "/orders", try dpop("GET", "/orders", nonce: nonce), expect: 200)
        _ = try await send("10.", "GET", "/me", try dpop("GET", "/me", nonce: nonce), expect: 200)
    }
}
