import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("The issuers' keys at the resource")
struct IssuerKeysTests {
    @Test("after the issuer rotates its keys, a token signed with the new key is accepted (one refetch for its unknown kid)")
    func rotation() async throws {
        try await withTestProvider { provider in
            let cache = JWKSCache(transport: NIOHTTPTransport.shared, jwksURI: URL(string: provider.jwksURI)!, unknownKeyCooldown: 0)
            let server = try ResourceServer(.init(resource: ResourceFixture.resource, issuers: [TrustedIssuer(issuer: provider.issuer, keys: cache)]))
            let before = try await provider.issueJWTAccessToken(audience: ResourceFixture.resource.absoluteString)
            _ = try await server.verify(ResourceFixture.bearer(before))
            try await provider.rotateKeys()
            let after = try await provider.issueJWTAccessToken(audience: ResourceFixture.resource.absoluteString)
            _ = try await server.verify(ResourceFixture.bearer(after))
            _ = try await server.verify(ResourceFixture.bearer(before))
            #expect(await cache.fetchesRun == 2)
        }
    }

    @Test("keys that cannot be fetched make a 503 without a challenge, not a verdict on the token")
    func unavailable() async throws {
        try await withTestProvider { provider in
            await provider.failNextRequests(1, to: .jwks, with: .oauthError("server_error", status: 500))
            let server = try ResourceServer(.init(
                resource: ResourceFixture.resource,
                issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: URL(string: provider.jwksURI)!, transport: NIOHTTPTransport.shared)]
            ))
            let token = try await provider.issueJWTAccessToken(audience: ResourceFixture.resource.absoluteString)
            let refusal = try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer(token))
            #expect(refusal.rule == .keysUnavailable && refusal.status == 503 && refusal.headers.fields.isEmpty && refusal.error == nil)
        }
    }

    @Test("two trusted issuers: each token is verified with its own issuer's keys, never the other's")
    func twoIssuers() async throws {
        try await withTestProvider { first in
            try await withTestProvider { second in
                let issuers = [first, second].map {
                    TrustedIssuer(issuer: $0.issuer, jwksURI: URL(string: $0.jwksURI)!, transport: NIOHTTPTransport.shared)
                }
                let server = try ResourceServer(.init(resource: ResourceFixture.resource, issuers: issuers))
                let audience = ResourceFixture.resource.absoluteString
                #expect(try await server.verify(ResourceFixture.bearer(try await first.issueJWTAccessToken(audience: audience))).issuer == first.issuer)
                #expect(try await server.verify(ResourceFixture.bearer(try await second.issueJWTAccessToken(audience: audience))).issuer == second.issuer)
                // The second provider's key, claiming to be the first issuer.
                let now = Int(Date().timeIntervalSince1970)
                let forged = try await second.signJWT(claims: [
                    "iss": first.issuer, "sub": "x", "aud": audience, "client_id": "c", "iat": now, "exp": now + 60, "jti": "j",
                ])
                let refusal = try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer(forged))
                #expect(refusal.rule == .unknownKey || refusal.rule == .invalidSignature)
            }
        }
    }
}

@Suite("A token checked without a request")
struct VerifyTokenTests {
    @Test("verifyToken checks the token's own rules and reports the binding it claims, unproven")
    func tokenAlone() async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate()
            let bound = try await fixture.token(jkt: key.thumbprint)
            #expect(try await fixture.server.verifyToken(bound, requiring: ["orders:read"]).binding == .dpop(keyThumbprint: key.thumbprint))
            let foreign = try await fixture.provider.signJWT(claims: fixture.claims(["aud": "https://other.example"]))
            await #expect(throws: AccessRefusal.self) { try await fixture.server.verifyToken(foreign) }
            do throws(AccessRefusal) {
                _ = try await fixture.server.verifyToken(bound, requiring: ["orders:write"])
                Issue.record("a missing scope was accepted")
            } catch {
                #expect(error.rule == .insufficientScope && error.status == 403)
            }
        }
    }
}
