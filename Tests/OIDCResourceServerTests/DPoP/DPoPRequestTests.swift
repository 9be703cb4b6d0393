import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("DPoP-bound access tokens at the resource (RFC 9449 §4.3, §7)")
struct DPoPRequestTests {
    @Test("a DPoP-bound token with a fresh proof by its key is accepted, ES256 and RS256 proofs", arguments: [JWSAlgorithm.es256, .rs256, .edDSA])
    func accepted(_ algorithm: JWSAlgorithm) async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate(algorithm)
            let token = try await fixture.token(jkt: key.thumbprint)
            let access = try await fixture.server.verify(try fixture.dpop(token, key: key, method: "POST"), requiring: ["orders:read"])
            #expect(access.binding == .dpop(keyThumbprint: key.thumbprint) && access.tokenType == "DPoP")
        }
    }

    @Test("a proof is good for one request: the same proof again is a replay")
    func replay() async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            let request = try fixture.dpop(token, key: key)
            _ = try await fixture.server.verify(request)
            let refusal = try await fixture.refusal(request)
            #expect(refusal.rule == .replayedProof && refusal.error == "invalid_dpop_proof" && refusal.status == 401)
            #expect(refusal.challenges.first?.hasPrefix(#"DPoP error="invalid_dpop_proof""#) == true)
            #expect(refusal.challenges.count == 2 && refusal.challenges[1].hasPrefix("Bearer "))
            _ = try await fixture.server.verify(try fixture.dpop(token, key: key))
        }
    }

    @Test("a bound token sent as Bearer, an unbound one sent as DPoP, a proof by another key, no proof: refused")
    func bindingRules() async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate()
            let bound = try await fixture.token(jkt: key.thumbprint)
            let asBearer = try await fixture.refusal(ResourceFixture.bearer(bound))
            #expect(asBearer.rule == .boundTokenAsBearer && asBearer.challenges.first?.hasPrefix(#"DPoP error="invalid_token""#) == true)

            let unbound = try await fixture.token()
            #expect(try await fixture.refusal(try fixture.dpop(unbound, key: key)).rule == .unboundTokenAsDPoP)

            let other = try DPoPKey.generate()
            #expect(try await fixture.refusal(try fixture.dpop(bound, key: other)).rule == .proofKeyMismatch)

            let noProof = ResourceFixture.request([("Authorization", "DPoP " + bound)])
            #expect(try await fixture.refusal(noProof).rule == .missingProof)

            let proof = try key.proof(method: "GET", url: URL(string: ResourceFixture.target)!, now: fixture.clock.now())
            let bearerWithProof = ResourceFixture.request([("Authorization", "Bearer " + unbound), ("DPoP", proof)])
            #expect(try await fixture.refusal(bearerWithProof).rule == .proofWithBearerToken)
        }
    }

    @Test("htm and htu must be this request's; htu is compared normalized, without query and fragment")
    func methodAndURL() async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, method: "POST", proofMethod: "GET")).rule == .invalidProof)
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, method: "GET", proofMethod: "get")).rule == .invalidProof)
            for url in ["https://api.example/orders/43", "http://api.example/orders/42", "https://api.example:8443/orders/42", "https://evil.example/orders/42"] {
                #expect(try await fixture.refusal(try fixture.dpop(token, key: key, proofURL: url)).rule == .invalidProof)
            }
            for url in ["HTTPS://API.example:443/orders/42", "https://api.example/orders/./42", "https://api.example/%6Frders/42", "https://api.example/orders/42?page=2#x"] {
                _ = try await fixture.server.verify(try fixture.dpop(token, key: key, url: ResourceFixture.target + "?q=1", proofURL: url))
            }
        }
    }

    @Test("iat: a proof older than the window or from the future is refused; ath must be the token's hash")
    func timeAndHash() async throws {
        try await ResourceFixture.run({ $0.leeway = 5; $0.dpop.maximumProofAge = 60 }) { fixture in
            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            let now = fixture.clock.now()
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(-66))).rule == .invalidProof)
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(6))).rule == .invalidProof)
            _ = try await fixture.server.verify(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(-64)))

            let otherToken = try await fixture.token(scope: "orders:write", jkt: key.thumbprint)
            let proof = try key.proof(method: "GET", url: URL(string: ResourceFixture.target)!, accessToken: Secret(otherToken), now: now)
            let mismatched = ResourceFixture.request([("Authorization", "DPoP " + token), ("DPoP", proof)])
            #expect(try await fixture.refusal(mismatched).rule == .accessTokenHashMismatch)
        }
    }

    @Test("the proof's window is its own: with the tokens' 60 s leeway, a proof 115 s old or 55 s ahead is refused; 64 s old and 4 s ahead pass")
    func proofWindowIsNotTheTokenLeeway() async throws {
        try await ResourceFixture.run({ $0.leeway = 60 }) { fixture in
            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            let now = fixture.clock.now()
            let old = try await fixture.refusal(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(-115)))
            #expect(old.rule == .invalidProof && old.message.contains("65 seconds"), "\(old.message)")
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(55))).rule == .invalidProof)
            _ = try await fixture.server.verify(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(-64)))
            _ = try await fixture.server.verify(try fixture.dpop(token, key: key, iat: now.addingTimeInterval(4)))
        }
    }

    @Test("server nonces: no nonce gets use_dpop_nonce with DPoP-Nonce; the nonce then works; the previous window's is accepted and the new one announced")
    func nonces() async throws {
        let nonces = try DPoPServerNonces(lifetime: 60)
        try await ResourceFixture.run({ $0.dpop.nonces = nonces }) { fixture in
            let key = try DPoPKey.generate()
            let token = try await fixture.token(jkt: key.thumbprint)
            let refusal = try await fixture.refusal(try fixture.dpop(token, key: key))
            #expect(refusal.rule == .nonceRequired && refusal.error == "use_dpop_nonce" && refusal.status == 401)
            let nonce = try #require(refusal.headers["DPoP-Nonce"])
            #expect(refusal.challenges.first?.hasPrefix(#"DPoP error="use_dpop_nonce""#) == true)

            let access = try await fixture.server.verify(try fixture.dpop(token, key: key, nonce: nonce))
            #expect(access.responseHeaders.fields.isEmpty)

            fixture.clock.advance(60)
            let rotated = try await fixture.server.verify(try fixture.dpop(token, key: key, nonce: nonce))
            let next = try #require(rotated.responseHeaders["DPoP-Nonce"])
            #expect(next != nonce)

            fixture.clock.advance(60)
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, nonce: nonce)).rule == .nonceRequired)
            #expect(try await fixture.refusal(try fixture.dpop(token, key: key, nonce: "forged-nonce")).rule == .nonceRequired)
            _ = try await fixture.server.verify(try fixture.dpop(token, key: key, nonce: next))
        }
    }

    @Test("nonces from a shared secret are accepted by every instance that shares it")
    func sharedNonces() throws {
        let secret = Secret(String(repeating: "s", count: 40))
        let first = try DPoPServerNonces(secret: secret)
        let second = try DPoPServerNonces(secret: secret)
        let other = try DPoPServerNonces(secret: Secret(String(repeating: "t", count: 40)))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(first.current(at: now) == second.current(at: now) && first.current(at: now) != other.current(at: now))
        #expect(!String(describing: first).contains("sss") && !String(reflecting: first).contains("sss"))
        #expect(throws: OIDCError.self) { try DPoPServerNonces(secret: Secret("short")) }
    }
}
