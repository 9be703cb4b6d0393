import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

/// Security review 5, L2: a token bound by an RFC 7800 method this resource cannot check is
/// refused, never taken as a bearer token.
@Suite("cnf members this resource cannot check are refused (RFC 7800; security review 5, L2)")
struct UnsupportedConfirmationTests {
    /// One `cnf` per proof-of-possession method other than `jkt` and `x5t#S256`.
    static var methods: [(String, [String: Any])] { [
        ("jwk", ["jwk": ["kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"]]),
        ("kid", ["kid": "dfd1aa97-6d8d-4575-a0fe-34b96de2bfad"]),
        ("jku", ["jku": "https://keys.example/pop", "kid": "key-1"]),
        ("x5t", ["x5t": "dGhpcyBpcyBhIFNIQTEgdGh1bWJwcmludA"]),
    ] }

    static let cases: [(String, ResourceServer.DPoPSettings.Mode)] = methods.flatMap { method in
        [ResourceServer.DPoPSettings.Mode.off, .allowed].map { (method.0, $0) }
    }

    @Test("a token bound by cnf.jwk, cnf.kid, cnf.jku or cnf.x5t, sent as Bearer, is refused with invalid_token (unsupported_cnf), under --dpop off and allowed", arguments: cases)
    func refusedAsBearer(_ member: String, _ mode: ResourceServer.DPoPSettings.Mode) async throws {
        let confirmation = try #require(Self.methods.first { $0.0 == member }?.1)
        try await ResourceFixture.run({ $0.dpop.mode = mode }) { fixture in
            let token = try await fixture.token(extra: ["cnf": confirmation])
            let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
            #expect(refusal.rule == .unsupportedConfirmation && refusal.status == 401 && refusal.error == "invalid_token", "\(refusal.rule): \(refusal.message)")
            #expect(refusal.message.contains("cnf: \(member)"), "\(refusal.message)")
            #expect(refusal.challenges.first?.hasPrefix(#"Bearer error="invalid_token""#) == true)
            // Inspecting the token alone (`oidc verify --kind access`) refuses it too.
            do {
                let access = try await fixture.server.verifyToken(token)
                Issue.record("verifyToken accepted a token it cannot check the binding of: \(access.binding)")
            } catch let refusal as AccessRefusal {
                #expect(refusal.rule == .unsupportedConfirmation)
            }
        }
    }

    @Test("the controls: no cnf and an empty cnf are bearer tokens; cnf.jkt sent as Bearer is bound_token_as_bearer; a cnf that is not an object is invalid_claim; jkt beside an unknown member (even with a good proof) is unsupported_cnf")
    func controlsAndMixtures() async throws {
        try await ResourceFixture.run { fixture in
            let plain = try await fixture.server.verify(ResourceFixture.bearer(try await fixture.token()))
            #expect(plain.binding == .bearer)
            let empty = try await fixture.server.verify(ResourceFixture.bearer(try await fixture.token(extra: ["cnf": [String: Any]()])))
            #expect(empty.binding == .bearer)

            let key = try DPoPKey.generate()
            let bound = try await fixture.token(jkt: key.thumbprint)
            #expect(try await fixture.refusal(ResourceFixture.bearer(bound)).rule == .boundTokenAsBearer)

            let notObject = try await fixture.token(extra: ["cnf": "jkt"])
            let malformed = try await fixture.refusal(ResourceFixture.bearer(notObject))
            #expect(malformed.rule == .invalidClaim && malformed.error == "invalid_token")

            let mixed = try await fixture.token(extra: ["cnf": ["jkt": key.thumbprint, "kid": "k"]])
            let refusal = try await fixture.refusal(try fixture.dpop(mixed, key: key))
            #expect(refusal.rule == .unsupportedConfirmation && refusal.error == "invalid_token")
        }
    }

    /// Adds `cnf` to the provider's real introspection answers (as an authorization server that
    /// binds tokens another way would send it).
    struct AddingConfirmation: HTTPStage {
        /// The `cnf` value, as JSON.
        let confirmation: Data
        func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
            var response = try await next(request)
            if var answer = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any], answer["active"] as? Bool == true {
                answer["cnf"] = try? JSONSerialization.jsonObject(with: confirmation)
                response.body = Array((try? JSONSerialization.data(withJSONObject: answer)) ?? Data(response.body))
            }
            return response
        }
    }

    @Test("an introspection answer whose cnf holds jwk, kid, jku or x5t is refused with unsupported_cnf; the same token without it is accepted", arguments: methods.map(\.0))
    func introspectionAnswers(_ member: String) async throws {
        let confirmation = try JSONSerialization.data(withJSONObject: try #require(Self.methods.first { $0.0 == member }?.1))
        try await IntrospectionTests.run({ $0.client.stages = [AddingConfirmation(confirmation: confirmation)] }) { provider, server, _ in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let refusal = try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer(tokens.accessToken.revealedValue))
            #expect(refusal.rule == .unsupportedConfirmation && refusal.status == 401 && refusal.error == "invalid_token", "\(refusal.message)")
            #expect(await provider.requestCount(.introspection) == 1)
        }
        try await IntrospectionTests.run { provider, server, _ in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let access = try await server.verify(ResourceFixture.bearer(tokens.accessToken.revealedValue))
            #expect(access.binding == .bearer && access.source == .introspection)
        }
    }
}
