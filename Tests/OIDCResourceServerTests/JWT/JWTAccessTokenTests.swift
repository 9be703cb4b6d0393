import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("JWT access tokens (RFC 9068)")
struct JWTAccessTokenTests {
    @Test("an at+jwt token signed with the issuer's published key is accepted, RS256 and ES256", arguments: TestProvider.IDTokenAlgorithm.allCases)
    func accepted(_ algorithm: TestProvider.IDTokenAlgorithm) async throws {
        try await ResourceFixture.run(provider: .init(idTokenAlgorithm: algorithm)) { fixture in
            let token = try await fixture.token(scope: "orders:read orders:write")
            let access = try await fixture.server.verify(ResourceFixture.bearer(token), requiring: ["orders:read"])
            let user = await fixture.provider.user
            #expect(access.subject == user.subject && access.clientID == "test-client")
            #expect(access.scopes == ["orders:read", "orders:write"] && access.issuer == fixture.provider.issuer)
            #expect(access.audience == [ResourceFixture.resource.absoluteString] && access.binding == .bearer && access.tokenType == "Bearer")
            #expect(access.expiresAt != nil && access.tokenID != nil && access.responseHeaders.fields.isEmpty)
            #expect(access.claims["client_id"] == .string("test-client"))
            guard case .jwt(let alg, _) = access.source else { Issue.record("not a JWT source"); return }
            #expect(alg.rawValue == algorithm.rawValue)
        }
    }

    @Test("typ: application/at+jwt and any case accepted; JWT or none refused unless untyped tokens are allowed")
    func typeRules() async throws {
        try await ResourceFixture.run { fixture in
            for type in ["application/at+jwt", "AT+JWT"] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(), type: type)
                _ = try await fixture.server.verify(ResourceFixture.bearer(token))
            }
            for type: String? in ["JWT", nil] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(), type: type)
                let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
                #expect(refusal.rule == .untypedToken && refusal.status == 401 && refusal.error == "invalid_token")
            }
        }
        try await ResourceFixture.run({ $0.acceptsUntypedTokens = true }) { fixture in
            for type: String? in ["JWT", nil] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(), type: type)
                _ = try await fixture.server.verify(ResourceFixture.bearer(token))
            }
        }
    }

    @Test("an ID token or a logout token presented as an access token is refused (RFC 8725 §3.11), even with untyped tokens allowed")
    func otherKindsRefused() async throws {
        try await ResourceFixture.run({ $0.acceptsUntypedTokens = true }) { fixture in
            let logout = try await fixture.provider.signJWT(
                claims: fixture.claims(["events": ["http://schemas.openid.net/event/backchannel-logout": [String: Any]()]]), type: "logout+jwt"
            )
            let idToken = try await fixture.provider.signJWT(claims: fixture.claims(["nonce": "n-0S6_WzA2Mj"]), type: "JWT")
            let untypedLogout = try await fixture.provider.signJWT(
                claims: fixture.claims(["events": ["http://schemas.openid.net/event/backchannel-logout": [String: Any]()]]), type: nil
            )
            let proof = try await fixture.provider.signJWT(claims: fixture.claims(), type: "dpop+jwt")
            for token in [logout, idToken, untypedLogout, proof] {
                let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
                #expect(refusal.rule == .wrongTokenType && refusal.error == "invalid_token")
            }
        }
    }

    @Test("iss must be a trusted issuer exactly; aud must contain the resource")
    func issuerAndAudience() async throws {
        try await ResourceFixture.run { fixture in
            for issuer in [fixture.provider.issuer + "/", fixture.provider.issuer.uppercased(), "https://evil.example"] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(["iss": issuer]))
                #expect(try await fixture.refusal(ResourceFixture.bearer(token)).rule == .untrustedIssuer)
            }
            for audience: Any in ["https://api.example/other", ["https://api.example/other", "test-client"], "https://api.example/orders/"] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(["aud": audience]))
                let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
                #expect(refusal.rule == .audienceMismatch && refusal.status == 401)
            }
            let several = try await fixture.provider.signJWT(claims: fixture.claims(["aud": ["https://other.example", ResourceFixture.resource.absoluteString]]))
            #expect(try await fixture.server.verify(ResourceFixture.bearer(several)).audience.count == 2)
        }
    }

    @Test("exp is required and checked with the leeway; nbf and iat in the future are refused")
    func times() async throws {
        try await ResourceFixture.run({ $0.leeway = 30 }) { fixture in
            let now = Int(fixture.clock.now().timeIntervalSince1970)
            var claims = fixture.claims()
            claims["exp"] = nil
            let noExpiry = try await fixture.provider.signJWT(claims: claims)
            #expect(try await fixture.refusal(ResourceFixture.bearer(noExpiry)).rule == .invalidClaim)

            let expiring = try await fixture.provider.signJWT(claims: fixture.claims(["exp": now + 10]))
            _ = try await fixture.server.verify(ResourceFixture.bearer(expiring))
            fixture.clock.advance(39)
            _ = try await fixture.server.verify(ResourceFixture.bearer(expiring))
            fixture.clock.advance(2)
            #expect(try await fixture.refusal(ResourceFixture.bearer(expiring)).rule == .tokenExpired)

            let later = Int(fixture.clock.now().timeIntervalSince1970)
            for changes: [String: Any] in [["nbf": later + 31], ["iat": later + 31]] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(changes))
                #expect(try await fixture.refusal(ResourceFixture.bearer(token)).rule == .tokenNotYetValid)
            }
            let withinLeeway = try await fixture.provider.signJWT(claims: fixture.claims(["nbf": later + 29, "iat": later + 29]))
            _ = try await fixture.server.verify(ResourceFixture.bearer(withinLeeway))
        }
    }

    @Test("RFC 9068's required claims: sub, client_id, iat and jti, each refused when missing unless the configuration drops it")
    func requiredClaims() async throws {
        try await ResourceFixture.run { fixture in
            for name in ["sub", "client_id", "iat", "jti"] {
                var claims = fixture.claims()
                claims[name] = nil
                let token = try await fixture.provider.signJWT(claims: claims)
                let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
                #expect(refusal.rule == .invalidClaim && refusal.message.contains(name))
            }
        }
        try await ResourceFixture.run({ $0.requiredClaims = [] }) { fixture in
            var claims = fixture.claims()
            for name in ["sub", "client_id", "iat", "jti"] { claims[name] = nil }
            claims["azp"] = "legacy-client"
            let token = try await fixture.provider.signJWT(claims: claims)
            let access = try await fixture.server.verify(ResourceFixture.bearer(token))
            #expect(access.subject == nil && access.clientID == "legacy-client")
        }
    }

    @Test("a route's scopes: 403 insufficient_scope naming the scopes required")
    func insufficientScope() async throws {
        try await ResourceFixture.run { fixture in
            let token = try await fixture.token(scope: "orders:read")
            let refusal = try await fixture.refusal(ResourceFixture.bearer(token), requiring: ["orders:write", "orders:read"])
            #expect(refusal.rule == .insufficientScope && refusal.status == 403 && refusal.error == "insufficient_scope")
            #expect(refusal.challenges.first?.hasPrefix(#"Bearer error="insufficient_scope", error_description=""#) == true)
            #expect(refusal.challenges.first?.contains(#"scope="orders:read orders:write""#) == true)
            let scp = try await fixture.provider.signJWT(claims: fixture.claims(["scope": NSNull(), "scp": ["orders:write"]]).filter { $0.key != "scope" })
            #expect(try await fixture.server.verify(ResourceFixture.bearer(scp), requiring: ["orders:write"]).scopes == ["orders:write"])
        }
    }

    @Test("a tampered token, an HMAC token, an unknown key and an unsigned token are refused")
    func signatures() async throws {
        try await ResourceFixture.run { fixture in
            let token = try await fixture.token()
            var parts = token.split(separator: ".").map(String.init)
            let forged = try await fixture.provider.signJWT(claims: fixture.claims(["scope": "admin"]))
            parts[1] = String(forged.split(separator: ".")[1])
            #expect(try await fixture.refusal(ResourceFixture.bearer(parts.joined(separator: "."))).rule == .invalidSignature)

            let hmac = TokenMinter(algorithm: .hs256, key: String(repeating: "k", count: 32))
            let hmacToken = try hmac.mint(claimsJSON: Self.json(fixture.claims()), headers: ["typ": "at+jwt"])
            #expect(try await fixture.refusal(ResourceFixture.bearer(hmacToken)).rule == .algorithmNotAllowed)

            let stranger = try TestSigningKey.generate(.rs256, keyID: "stranger")
            let strangers = try stranger.sign(claims: fixture.claims(), extraHeader: ["typ": "at+jwt"])
            #expect(try await fixture.refusal(ResourceFixture.bearer(strangers)).rule == .unknownKey)

            let header = Base64URLEncoding.encode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8))
            let unsigned = header + "." + Base64URLEncoding.encode(Array(try Self.json(fixture.claims()).utf8)) + ".c2ln"
            #expect(try await fixture.refusal(ResourceFixture.bearer(unsigned)).rule == .algorithmNotAllowed)
        }
    }

    @Test("a refusal never repeats the token")
    func refusalDoesNotEchoToken() async throws {
        try await ResourceFixture.run { fixture in
            let token = try await fixture.provider.signJWT(claims: fixture.claims(["aud": "https://elsewhere.example"]))
            let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
            let everything = refusal.description + refusal.body + refusal.headers.fields.map(\.value).joined() + String(describing: refusal)
            for part in token.split(separator: ".") { #expect(!everything.contains(part)) }
        }
    }

    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
