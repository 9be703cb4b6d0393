import Foundation
import Logging
import OIDC
import OIDCResourceServer
import OIDCTesting
import ProtectedAPI
import ResourceServerFlags

/// `--demo`: OIDCTesting's provider on 127.0.0.1 issues RFC 9068 access tokens, the API runs
/// beside it requiring `orders:read`, with DPoP nonces on, and a client sends what a real one
/// would, refusals included. Each step checks the status it expects, so the demo fails when the
/// API answers otherwise.
enum Demo {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    static func run() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let port = try CommandLineServer.freePort(host: "127.0.0.1")
                let base = "http://127.0.0.1:\(port)"
                var configuration = ResourceServer.Configuration(
                    resource: URL(string: base)!,
                    issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: URL(string: provider.jwksURI)!, transport: transport)])
                configuration.scopesSupported = ["orders:read"]
                configuration.dpop.nonces = try DPoPServerNonces()
                let server = try ResourceServer(configuration)
                print("The API on \(base), requiring orders:read of the access tokens of the provider at \(provider.issuer).")
                var logger = Logger(label: "protected-api")
                logger.logLevel = .warning
                let (running, listening) = AsyncStream.makeStream(of: Void.self)
                let serving = Task {
                    defer { listening.finish() }  // a failed bind must not leave the wait below hanging
                    try await ProtectedAPI.serve(ProtectedAPI.router(server, scopes: ["orders:read"]), host: "127.0.0.1", port: port, logger: logger) { listening.finish() }
                }
                for await _ in running {}
                defer { serving.cancel() }
                try await walkThrough(base: base, provider: provider, transport: transport)
                serving.cancel()
                _ = await serving.result
            }
        }
    }

    static func walkThrough(base: String, provider: TestProvider, transport: NIOHTTPTransport) async throws {
        func send(_ step: String, _ path: String, _ headers: HTTPHeaders = [:], expect: Int) async throws -> HTTPResponse {
            let response = try await transport.send(HTTPRequest(method: "GET", url: URL(string: base + path)!, headers: headers))
            print("\(step) GET \(path) → \(response.status)")
            for challenge in response.headers.values("WWW-Authenticate") { print("   WWW-Authenticate: \(challenge)") }
            if let nonce = response.headers["DPoP-Nonce"] { print("   DPoP-Nonce: \(nonce)") }
            if response.status < 300 { print("   " + String(decoding: response.body, as: UTF8.self)) }
            guard response.status == expect else { throw Unexpected(description: "\(step): \(response.status), expected \(expect)") }
            return response
        }
        _ = try await send("1.", "/.well-known/oauth-protected-resource", expect: 200)
        _ = try await send("2. no token:", "/orders", expect: 401)

        let bearer = try await provider.issueJWTAccessToken(audience: base, scope: "orders:read")
        _ = try await send("3. bearer token (orders:read):", "/orders", ["Authorization": "Bearer " + bearer], expect: 200)
        let other = try await provider.issueJWTAccessToken(audience: base, scope: "profile")
        _ = try await send("4. a token without orders:read:", "/orders", ["Authorization": "Bearer " + other], expect: 403)

        let key = try DPoPKey.generate(.es256)
        let bound = try await provider.issueJWTAccessToken(audience: base, scope: "orders:read", dpopKeyThumbprint: key.thumbprint)
        func dpop(_ path: String, nonce: String?) throws -> HTTPHeaders {
            let proof = try key.proof(method: "GET", url: URL(string: base + path)!, accessToken: Secret(bound), nonce: nonce)
            return ["Authorization": "DPoP " + bound, "DPoP": proof]
        }
        let challenge = try await send("5. DPoP-bound token, proof without a nonce:", "/orders", try dpop("/orders", nonce: nil), expect: 401)
        let nonce = challenge.headers["DPoP-Nonce"]
        let headers = try dpop("/orders", nonce: nonce)
        _ = try await send("6. again, with the server's nonce:", "/orders", headers, expect: 200)
        _ = try await send("7. the same proof replayed:", "/orders", headers, expect: 401)
        _ = try await send("8. the DPoP-bound token as a bearer token:", "/orders", ["Authorization": "Bearer " + bound], expect: 401)
        _ = try await send("9. a new proof:", "/me", try dpop("/me", nonce: nonce), expect: 200)
    }
}
