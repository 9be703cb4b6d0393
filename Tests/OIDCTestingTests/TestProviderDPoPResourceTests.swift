import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// DPoP-bound tokens at the test provider's protected resource and userinfo endpoint (RFC 9449 §7, §9).
@Suite("The test provider's DPoP protected resource", .timeLimit(.scaledMinutes(1)))
struct TestProviderDPoPResourceTests {
    /// A signed-in key and its bound access token.
    static func boundToken(_ provider: TestProvider) async throws -> (key: DPoPTestKey, token: String) {
        let key = try DPoPTestKey()
        let tokens = try await DPoPRequests.signIn(provider, key: key)
        return (key, try #require(tokens["access_token"] as? String))
    }

    static func challenge(_ response: RawHTTPClient.Response) -> String { response.header("WWW-Authenticate") ?? "" }

    @Test("a bound token with its proof is accepted at /api/me and /userinfo; sent as a bearer token it is refused under the DPoP scheme")
    func boundTokenAtResource() async throws {
        try await withTestProvider { provider in
            let (key, token) = try await Self.boundToken(provider)
            let me = try await DPoPRequests.get(
                provider.protectedResourceURL, token: token, proof: try key.proof("GET", provider.protectedResourceURL, accessToken: token)
            )
            #expect(me.status == 200)
            #expect(try me.json()["sub"] as? String == TestUser.default.subject)
            let userinfo = try await DPoPRequests.get(
                provider.userinfoEndpoint, token: token, proof: try key.proof("GET", provider.userinfoEndpoint, accessToken: token)
            )
            #expect(userinfo.status == 200)

            let asBearer = try await DPoPRequests.get(provider.protectedResourceURL, token: token, scheme: "Bearer", proof: nil)
            #expect(asBearer.status == 401)
            #expect(Self.challenge(asBearer).hasPrefix(#"DPoP error="invalid_token""#))
            #expect(Self.challenge(asBearer).contains(#"algs="ES256 "#))
            let bearerWithProof = try await DPoPRequests.get(
                provider.protectedResourceURL, token: token, scheme: "Bearer",
                proof: try key.proof("GET", provider.protectedResourceURL, accessToken: token)
            )
            #expect(bearerWithProof.status == 401)
            #expect(await provider.dpopProofs(.protectedResource).map(\.error) == [nil])
            #expect(await provider.dpopProofs(.userinfo).map(\.error) == [nil])
        }
    }

    @Test("a nonce challenge at the resource is 401 with WWW-Authenticate DPoP error=use_dpop_nonce and DPoP-Nonce; one retry succeeds, no token request")
    func nonceAtResource() async throws {
        var withNonces = TestProvider.Configuration()
        withNonces.dpop.nonces = .required(at: [.protectedResource])
        try await withTestProvider(withNonces) { provider in
            let (key, token) = try await Self.boundToken(provider)
            let url = provider.protectedResourceURL
            let challenged = try await DPoPRequests.get(url, token: token, proof: try key.proof("GET", url, accessToken: token))
            #expect(challenged.status == 401)
            #expect(Self.challenge(challenged).hasPrefix(#"DPoP error="use_dpop_nonce""#))
            let nonce = try #require(challenged.header("DPoP-Nonce"))
            let retried = try await DPoPRequests.get(url, token: token, proof: try key.proof("GET", url, accessToken: token, nonce: nonce))
            #expect(retried.status == 200)
            #expect(await provider.requestCount(.protectedResource) == 2)
            #expect(await provider.requestCount(.token) == 1)
            #expect(await provider.dpopProofs(.protectedResource).map(\.error) == ["use_dpop_nonce", nil])
        }
    }

    /// A proof at the resource that must be refused, and what is wrong with it.
    enum Wrong: String, CaseIterable, CustomTestStringConvertible {
        case missing, ath, noATH, otherKey, method, url, replayed
        var testDescription: String { rawValue }
    }

    @Test("a missing proof, a wrong ath, another key, another method or URL, and a replay are refused with DPoP error=invalid_dpop_proof", arguments: Wrong.allCases)
    func wrongProofAtResource(_ wrong: Wrong) async throws {
        try await withTestProvider { provider in
            let (key, token) = try await Self.boundToken(provider)
            let url = provider.protectedResourceURL
            var proof: String?
            switch wrong {
            case .missing: proof = nil
            case .ath: proof = try key.proof("GET", url, accessToken: token + "x")
            case .noATH: proof = try key.proof("GET", url)
            case .otherKey: proof = try DPoPTestKey().proof("GET", url, accessToken: token)
            case .method: proof = try key.proof("POST", url, accessToken: token)
            case .url: proof = try key.proof("GET", provider.userinfoEndpoint, accessToken: token)
            case .replayed:
                let used = try key.proof("GET", url, accessToken: token)
                #expect(try await DPoPRequests.get(url, token: token, proof: used).status == 200)
                proof = used
            }
            let response = try await DPoPRequests.get(url, token: token, proof: proof)
            #expect(response.status == 401)
            #expect(Self.challenge(response).hasPrefix(#"DPoP error="invalid_dpop_proof""#))
            #expect(Self.challenge(response).contains("algs="))
            #expect(DPoPRequests.error(response) == "invalid_dpop_proof")
        }
    }

    @Test("an unknown token or a bearer token under the DPoP scheme gets DPoP error=invalid_token; with DPoP required a missing token is challenged with DPoP")
    func tokenErrors() async throws {
        try await withTestProvider { provider in
            let key = try DPoPTestKey()
            let url = provider.protectedResourceURL
            let unknown = try await DPoPRequests.get(url, token: "unknown", proof: try key.proof("GET", url, accessToken: "unknown"))
            #expect(unknown.status == 401)
            #expect(Self.challenge(unknown).hasPrefix(#"DPoP error="invalid_token""#))
            let bearer = try await provider.issueTokens().accessToken.revealedValue
            let unbound = try await DPoPRequests.get(url, token: bearer, proof: try key.proof("GET", url, accessToken: bearer))
            #expect(Self.challenge(unbound).hasPrefix(#"DPoP error="invalid_token""#))
            #expect(try await DPoPRequests.get(url, token: bearer, scheme: "Bearer", proof: nil).status == 200)
            let missing = try await RawHTTPClient.get(url)
            #expect(Self.challenge(missing) == "Bearer")
        }
        var required = TestProvider.Configuration()
        required.dpop = .required
        try await withTestProvider(required) { provider in
            let missing = try await RawHTTPClient.get(provider.protectedResourceURL)
            #expect(missing.status == 401)
            #expect(Self.challenge(missing).hasPrefix(#"DPoP algs=""#))
        }
    }

    @Test("an expired proof is refused at the resource, and the provider's clock decides")
    func proofAgeFollowsProviderClock() async throws {
        try await withTestProvider { provider in
            let (key, token) = try await Self.boundToken(provider)
            let url = provider.protectedResourceURL
            await provider.advanceClock(by: 90)
            let late = try await DPoPRequests.get(url, token: token, proof: try key.proof("GET", url, accessToken: token))
            #expect(Self.challenge(late).hasPrefix(#"DPoP error="invalid_dpop_proof""#))
            let onTime = try await DPoPRequests.get(
                url, token: token, proof: try key.proof("GET", url, accessToken: token, issuedAt: Date().addingTimeInterval(90))
            )
            #expect(onTime.status == 200)
        }
    }
}
