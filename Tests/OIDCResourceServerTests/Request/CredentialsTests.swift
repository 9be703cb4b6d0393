import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Request credentials and challenges (RFC 6750 §2, §3; RFC 9449 §7.1)")
struct CredentialsTests {
    static let metadata = #"resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#

    @Test("no token: 401 with a Bearer and a DPoP challenge without an error code, each naming the metadata")
    func noToken() async throws {
        try await ResourceFixture.run { fixture in
            let cases: [[(String, String)]] = [[], [("Authorization", "Basic dXNlcjpwYXNz")], [("Authorization", "Negotiate")]]
            for headers in cases {
                let refusal = try await fixture.refusal(ResourceFixture.request(headers))
                #expect(refusal.rule == .missingToken && refusal.status == 401 && refusal.error == nil)
                #expect(refusal.challenges == ["Bearer " + Self.metadata, #"DPoP algs="RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519", "# + Self.metadata])
            }
            // A route that needs scopes names them on every challenge, still without an error code
            // (RFC 6750 §3), so that a client asks for them when it logs in.
            let scoped = try await fixture.refusal(ResourceFixture.request([]), requiring: ["orders:write", "orders:read"])
            #expect(scoped.rule == .missingToken && scoped.status == 401 && scoped.error == nil)
            #expect(scoped.challenges == [
                #"Bearer scope="orders:read orders:write", "# + Self.metadata,
                #"DPoP scope="orders:read orders:write", algs="RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519", "# + Self.metadata,
            ])
        }
    }

    @Test("two Authorization headers, two DPoP headers, or a token in the header and the URL: 400 invalid_request, on the DPoP challenge for the DPoP header")
    func duplicates() async throws {
        try await ResourceFixture.run { fixture in
            let token = try await fixture.token()
            let cases: [(ResourceRequest, AccessRefusal.Rule)] = [
                (ResourceFixture.request([("Authorization", "Bearer " + token), ("authorization", "Bearer " + token)]), .duplicateAuthorization),
                (ResourceFixture.request([("Authorization", "DPoP " + token), ("DPoP", "a.b.c"), ("dpop", "a.b.c")]), .duplicateProof),
                (ResourceFixture.request([("Authorization", "Bearer " + token)], url: ResourceFixture.target + "?access_token=" + token), .tokenInTwoPlaces),
                (ResourceFixture.request([], url: ResourceFixture.target + "?x=1&access_token=" + token), .tokenInQuery),
            ]
            for (request, rule) in cases {
                let refusal = try await fixture.refusal(request)
                #expect(refusal.rule == rule && refusal.status == 400 && refusal.error == "invalid_request")
                // The error goes on the challenge of the scheme it is about: a second DPoP header on DPoP's.
                let scheme = rule == .duplicateProof ? "DPoP" : "Bearer"
                #expect(refusal.challenges.first?.hasPrefix(scheme + #" error="invalid_request", error_description=""#) == true, "\(refusal.challenges)")
                #expect(refusal.challenges.count == 2)
            }
        }
    }

    @Test("malformed Authorization values are refused without a crash", arguments: [
        "Bearer", "Bearer ", "Bearer a b", "Bearer a\u{0}b", "Bearer ==abc", "Bearer abc=def", "Bearer \u{2024}abc",
        "Bearer abc\"def", "Bearer\tabc", "B\u{0435}arer abc", "\u{212A}ey abc", "Bearer " + String(repeating: "ä", count: 4),
    ])
    func malformedAuthorization(_ value: String) async throws {
        try await ResourceFixture.run { fixture in
            let refusal = try await fixture.refusal(ResourceFixture.request([("Authorization", value)]))
            #expect([AccessRefusal.Rule.malformedAuthorization, .missingToken].contains(refusal.rule))
            #expect(refusal.status == 400 || refusal.status == 401)
        }
    }

    @Test("a Cyrillic look-alike of 'Bearer' is not the Bearer scheme")
    func lookAlikeScheme() async throws {
        try await ResourceFixture.run { fixture in
            let token = try await fixture.token()
            let refusal = try await fixture.refusal(ResourceFixture.request([("Authorization", "B\u{0435}arer " + token)]))
            #expect(refusal.rule == .missingToken || refusal.rule == .malformedAuthorization)
        }
    }

    @Test("a huge token is refused by its length before anything is parsed; junk tokens of every shape are refused")
    func hugeAndJunkTokens() async throws {
        try await ResourceFixture.run { fixture in
            let huge = String(repeating: "A", count: 1_000_000)
            #expect(try await fixture.refusal(ResourceFixture.bearer(huge)).rule == .tokenTooLong)
            #expect(try await fixture.refusal(ResourceFixture.bearer(huge + "." + huge + ".x")).rule == .tokenTooLong)
            for junk in ["a.b.c", "....", "e30.e30.e30", "opaque-token-value", "eyJhbGciOiJSUzI1NiJ9.e30."] {
                let refusal = try await fixture.refusal(ResourceFixture.bearer(junk))
                #expect(refusal.status == 401 && refusal.error == "invalid_token")
            }
        }
    }

    @Test("deeply nested claims, duplicate members and unknown crit headers are refused without a crash")
    func hostileJSON() async throws {
        try await ResourceFixture.run { fixture in
            let key = try TestSigningKey.generate(.es256)
            let nested = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
            let claims = try JWTAccessTokenTests.json(fixture.claims())
            let bodies = [
                String(claims.dropLast()) + #","deep":\#(nested)}"#,
                String(claims.dropLast()) + #","aud":"https://api.example/orders"}"#,
                String(claims.dropLast()) + #","\u0073cope":"admin"}"#,
            ]
            for body in bodies {
                let token = try key.sign(headerJSON: #"{"alg":"ES256","typ":"at+jwt"}"#, payloadJSON: body)
                let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
                #expect(refusal.rule == .malformedToken)
            }
            let critical = try key.sign(headerJSON: #"{"alg":"ES256","typ":"at+jwt","crit":["exp-ext"],"exp-ext":1}"#, payloadJSON: claims)
            let unsupported = try await fixture.refusal(ResourceFixture.bearer(critical))
            #expect(unsupported.rule == .unsupportedCriticalHeader && unsupported.error == "invalid_token")
            #expect(unsupported.message.contains("crit") && !unsupported.message.contains("exp-ext"), "\(unsupported.message)")
            let duplicateHeader = try key.sign(headerJSON: #"{"alg":"ES256","typ":"at+jwt","typ":"JWT"}"#, payloadJSON: claims)
            let duplicate = try await fixture.refusal(ResourceFixture.bearer(duplicateHeader))
            #expect(duplicate.rule == .malformedToken && duplicate.message.contains("header") && duplicate.message.contains("twice"), "\(duplicate.message)")
        }
    }

    @Test("DPoP off: only a Bearer challenge, and a DPoP-scheme request is a 401 without an error code (RFC 6750 §3.1); DPoP required: only a DPoP challenge")
    func modes() async throws {
        try await ResourceFixture.run({ $0.dpop.mode = .off }) { fixture in
            let token = try await fixture.token()
            #expect(try await fixture.refusal(ResourceFixture.request([])).challenges == ["Bearer " + Self.metadata])
            let refusal = try await fixture.refusal(ResourceFixture.request([("Authorization", "DPoP " + token)]))
            #expect(refusal.rule == .dpopNotAccepted && refusal.status == 401 && refusal.error == nil)
            #expect(refusal.challenges == ["Bearer " + Self.metadata])
        }
        try await ResourceFixture.run({ $0.dpop.mode = .required; $0.dpop.algorithms = [.es256] }) { fixture in
            let token = try await fixture.token()
            let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
            #expect(refusal.rule == .dpopRequired && refusal.status == 401)
            #expect(refusal.challenges == [#"DPoP error="invalid_token", error_description="This resource takes DPoP-bound access tokens only.", algs="ES256", "# + Self.metadata])
            // A DPoP-bound token sent as Bearer: the token is right, the scheme is not.
            let key = try DPoPKey.generate()
            let bound = try await fixture.token(jkt: key.thumbprint)
            let asBearer = try await fixture.refusal(ResourceFixture.bearer(bound))
            #expect(asBearer.rule == .boundTokenAsBearer && asBearer.status == 401 && asBearer.error == "invalid_token")
            #expect(asBearer.challenges.first?.hasPrefix(#"DPoP error="invalid_token", error_description="The access token is DPoP-bound: send it as 'Authorization: DPoP' with a proof.""#) == true)
            // Decided on the verified token: the same claims under a forged signature are just a bad token.
            var parts = bound.split(separator: ".").map(String.init)
            parts[2] = "AAAA"
            let forged = try await fixture.refusal(ResourceFixture.bearer(parts.joined(separator: ".")))
            #expect(forged.rule == .invalidSignature, "\(forged.rule)")
        }
    }

    @Test("the challenge's error_description keeps to RFC 6750's characters and never carries the token")
    func descriptionCharacters() async throws {
        try await ResourceFixture.run({ $0.metadataURL = nil }) { fixture in
            let token = try await fixture.provider.signJWT(claims: fixture.claims(["aud": "x"]))
            let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
            #expect(refusal.challenges[0] == #"Bearer error="invalid_token", error_description="The access token is not meant for this resource (aud).""#)
            #expect(refusal.challenges[1] == #"DPoP algs="RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519""#)
            #expect(refusal.body == #"{"error":"invalid_token","error_description":"The access token is not meant for this resource (aud)."}"#)
        }
    }
}
