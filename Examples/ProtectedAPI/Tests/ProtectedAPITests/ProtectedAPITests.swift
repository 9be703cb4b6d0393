import Foundation
import Logging
import OIDC
import OIDCResourceServer
import OIDCTesting
import ProtectedAPI
import ProtectedAPIVapor
import ResourceServerFlags
import Testing

/// Both frameworks' routes over real loopback HTTP, with access tokens from OIDCTesting's provider:
/// the same answers from each. (`oidc resource-server`'s own tests run against both programs too:
/// scripts/examples.sh.)
@Suite("ProtectedAPI: the same API in Hummingbird and in Vapor", .timeLimit(.minutes(1)))
struct ProtectedAPITests {
    enum Framework: String, CaseIterable, Sendable {
        case hummingbird, vapor
    }

    /// The API of `framework` on a free port while `body` runs with its base URL.
    func withAPI(_ framework: Framework, _ body: @escaping @Sendable (TestProvider, String) async throws -> Void) async throws {
        try await withTestProvider { provider in
            let port = try CommandLineServer.freePort(host: "127.0.0.1")
            let base = "http://127.0.0.1:\(port)"
            var configuration = ResourceServer.Configuration(
                resource: try #require(URL(string: base)),
                issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: try #require(URL(string: provider.jwksURI)), transport: NIOHTTPTransport.shared)])
            configuration.scopesSupported = ["read"]
            let server = try ResourceServer(configuration)
            var logger = Logger(label: "protected-api-test")
            logger.logLevel = .critical
            let (running, listening) = AsyncStream.makeStream(of: Void.self)
            let serving = Task {
                defer { listening.finish() }
                switch framework {
                case .hummingbird:
                    try await ProtectedAPI.serve(ProtectedAPI.router(server, scopes: ["read"]), host: "127.0.0.1", port: port, logger: logger) { listening.finish() }
                case .vapor:
                    try await ProtectedAPIVapor.serve(host: "127.0.0.1", port: port, logger: logger, listening: { listening.finish() }) { app in
                        ProtectedAPIVapor.routes(app, server, scopes: ["read"])
                    }
                }
            }
            for await _ in running {}
            defer { serving.cancel() }
            try await body(provider, base)
            serving.cancel()
            _ = await serving.result
        }
    }

    func send(_ url: String, _ headers: OIDC.HTTPHeaders = [:]) async throws -> OIDC.HTTPResponse {
        try await NIOHTTPTransport.shared.send(OIDC.HTTPRequest(url: try #require(URL(string: url)), headers: headers))
    }

    @Test("the metadata; a bearer token with the scope: 200 with the access as JSON; without it 403; none 401", arguments: Framework.allCases)
    func answers(framework: Framework) async throws {
        try await withAPI(framework) { provider, base in
            let metadata = try await send(base + "/.well-known/oauth-protected-resource")
            #expect(metadata.status == 200)
            #expect((try JSONSerialization.jsonObject(with: Data(metadata.body)) as? [String: Any])?["resource"] as? String == base)
            let token = try await provider.issueJWTAccessToken(audience: base, scope: "read")
            let ok = try await send(base + "/orders?page=2", ["Authorization": "Bearer " + token])
            #expect(ok.status == 200)
            let body = try JSONSerialization.jsonObject(with: Data(ok.body)) as? [String: Any]
            #expect(body?["sub"] as? String == "test-user" && body?["token_type"] as? String == "Bearer" && body?["scope"] as? String == "read")
            let weak = try await provider.issueJWTAccessToken(audience: base, scope: "profile")
            #expect(try await send(base + "/orders", ["Authorization": "Bearer " + weak]).status == 403)
            let none = try await send(base + "/orders")
            #expect(none.status == 401 && none.headers.values("WWW-Authenticate").first == #"Bearer scope="read", resource_metadata="\#(base)/.well-known/oauth-protected-resource""#)
        }
    }
}
