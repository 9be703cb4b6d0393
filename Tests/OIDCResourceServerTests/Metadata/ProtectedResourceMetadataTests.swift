import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Protected resource metadata (RFC 9728)")
struct ProtectedResourceMetadataTests {
    @Test("the well-known URL is path-inserted when the resource has a path", arguments: [
        ("https://api.example", "https://api.example/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"),
        ("https://api.example/", "https://api.example/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"),
        ("https://api.example/v1/orders", "https://api.example/.well-known/oauth-protected-resource/v1/orders", "/.well-known/oauth-protected-resource/v1/orders"),
        ("http://127.0.0.1:8080/api", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/api", "/.well-known/oauth-protected-resource/api"),
    ])
    func wellKnown(_ resource: String, _ url: String, _ path: String) {
        let metadata = ProtectedResourceMetadata(resource: URL(string: resource)!, authorizationServers: [])
        #expect(metadata.wellKnownURL.absoluteString == url && metadata.wellKnownPath == path)
    }

    @Test("the server's document: resource, authorization_servers, scopes, bearer methods, DPoP algorithms and requirement")
    func document() async throws {
        try await ResourceFixture.run({ configuration in
            configuration.dpop.mode = .required
            configuration.dpop.algorithms = [.es256, .ps256]
            configuration.scopesSupported = ["orders:read", "orders:write"]
        }) { fixture in
            let metadata = fixture.server.metadata
            #expect(metadata.jsonText == """
                {"resource":"https://api.example/orders","authorization_servers":["\(fixture.provider.issuer)"],\
                "scopes_supported":["orders:read","orders:write"],"bearer_methods_supported":["header"],\
                "dpop_signing_alg_values_supported":["PS256","ES256"],"dpop_bound_access_tokens_required":true}
                """)
            let parsed = try JSONSerialization.jsonObject(with: Data(metadata.json)) as? [String: Any]
            #expect(parsed?["resource"] as? String == "https://api.example/orders")
        }
        try await ResourceFixture.run({ $0.dpop.mode = .off }) { fixture in
            #expect(!fixture.server.metadata.jsonText.contains("dpop"))
        }
    }

    @Test("configurations that cannot be right are refused at init")
    func invalidConfigurations() async throws {
        let issuer = TrustedIssuer(issuer: "https://idp.example", keys: JWKSCache { [] })
        let cases: [(inout ResourceServer.Configuration) -> Void] = [
            { $0.resource = URL(string: "http://api.example/")! },
            { $0.resource = URL(string: "https://api.example/?x=1")! },
            { $0.resource = URL(string: "https://api.example/#f")! },
            { $0.issuers = [] },
            { $0.issuers = [issuer, issuer] },
            { $0.algorithms = [.hs256, .rs256] },
            { $0.algorithms = [] },
            { $0.dpop.algorithms = [.hs256] },
            { $0.leeway = -1 },
            { $0.leeway = .infinity },
            { $0.audiences = [] },
        ]
        for change in cases {
            var configuration = ResourceServer.Configuration(resource: URL(string: "https://api.example/")!, issuers: [issuer])
            change(&configuration)
            #expect(throws: OIDCError.self) { try ResourceServer(configuration) }
        }
        _ = try ResourceServer(.init(resource: URL(string: "http://127.0.0.1:9/")!, issuers: [issuer]))
    }
}
