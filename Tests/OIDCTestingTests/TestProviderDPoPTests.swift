import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// DPoP (RFC 9449) at the test provider's token and pushed authorization endpoints, driven over
/// loopback with proofs the tests make.
@Suite("The test provider's DPoP token endpoint", .timeLimit(.scaledMinutes(1)))
struct TestProviderDPoPTests {
    static let service = TestProvider.Client.confidential(id: "service", secret: "service-secret", authentication: .clientSecretPost)

    static func configuration(_ dpop: TestProvider.DPoP = .init()) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: [.default, service])
        configuration.dpop = dpop
        return configuration
    }

    /// `client_credentials` for the confidential client, with the proof when given.
    static func serviceToken(_ provider: TestProvider, proof: String?) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.postForm(provider.tokenEndpoint, [
            "grant_type": "client_credentials", "client_id": "service", "client_secret": "service-secret",
        ], headers: proof.map { [DPoPRequests.header($0)] } ?? [])
    }

    @Test("a code exchanged with a proof gives DPoP tokens bound to the key: token_type, cnf.jkt at introspection, algorithms in discovery")
    func boundTokens() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let key = try DPoPTestKey()
            let tokens = try await DPoPRequests.signIn(provider, key: key)
            #expect(tokens["token_type"] as? String == "DPoP")
            let accessToken = try #require(tokens["access_token"] as? String)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            let access = try await DPoPRequests.introspect(provider, accessToken)
            #expect(access["token_type"] as? String == "DPoP")
            #expect((access["cnf"] as? [String: Any])?["jkt"] as? String == (try key.thumbprint))
            let refresh = try await DPoPRequests.introspect(provider, refreshToken)
            #expect((refresh["cnf"] as? [String: Any])?["jkt"] as? String == (try key.thumbprint))

            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.count == 1)
            #expect(proofs.first?.isAccepted == true)
            #expect(proofs.first?.thumbprint == (try key.thumbprint))
            #expect(proofs.first?.claims["htm"] == "POST")
            #expect(proofs.first?.header["typ"] == "dpop+jwt")

            let discovery = try await RawHTTPClient.get(provider.discoveryURL).json()
            let algorithms = try #require(discovery["dpop_signing_alg_values_supported"] as? [String])
            #expect(algorithms.contains("ES256") && algorithms.contains("PS256") && algorithms.contains("EdDSA") && !algorithms.contains("HS256"))
        }
    }

    @Test("without a proof a token is a bearer token; when DPoP is required it is 400 invalid_dpop_proof; not offered, a proof is ignored")
    func support() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let bearer = try await Self.serviceToken(provider, proof: nil)
            #expect(try bearer.json()["token_type"] as? String == "Bearer")
            #expect(try await DPoPRequests.introspect(provider, try #require(try bearer.json()["access_token"] as? String))["cnf"] == nil)
        }
        try await withTestProvider(Self.configuration(.required)) { provider in
            let refused = try await Self.serviceToken(provider, proof: nil)
            #expect(refused.status == 400)
            #expect(DPoPRequests.error(refused) == "invalid_dpop_proof")
            let key = try DPoPTestKey(.ps256)
            let bound = try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(try bound.json()["token_type"] as? String == "DPoP")
        }
        try await withTestProvider(Self.configuration(.init(support: .notOffered))) { provider in
            let key = try DPoPTestKey()
            let ignored = try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(try ignored.json()["token_type"] as? String == "Bearer")
            #expect(try await RawHTTPClient.get(provider.discoveryURL).json()["dpop_signing_alg_values_supported"] == nil)
            #expect(await provider.dpopProofs(.token).isEmpty)
        }
    }

    @Test("a nonce challenge at the token endpoint is 400 use_dpop_nonce with DPoP-Nonce and spends nothing; the retry with the nonce succeeds")
    func nonceChallenge() async throws {
        try await withTestProvider(Self.configuration(.init(nonces: .required()))) { provider in
            let key = try DPoPTestKey(.edDSA)
            let pkce = try PKCE.generate()
            let code = try await DPoPRequests.authorize(provider, pkce: pkce)
            let challenged = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(challenged.status == 400)
            #expect(DPoPRequests.error(challenged) == "use_dpop_nonce")
            #expect(challenged.header("Cache-Control") == "no-store")
            let nonce = try #require(challenged.header("DPoP-Nonce"))
            #expect(await provider.dpopNonce() == nonce)

            let stale = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint, nonce: "stale"))
            #expect(DPoPRequests.error(stale) == "use_dpop_nonce")
            let retried = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint, nonce: nonce))
            #expect(retried.status == 200)
            #expect(try retried.json()["token_type"] as? String == "DPoP")
            #expect(retried.header("DPoP-Nonce") == nil)

            // A refresh that meets the challenge keeps its refresh token.
            let refreshToken = try #require(try retried.json()["refresh_token"] as? String)
            try await provider.rotateDPoPNonce()
            let again = try await DPoPRequests.refresh(provider, refreshToken, proof: try key.proof("POST", provider.tokenEndpoint, nonce: nonce))
            #expect(DPoPRequests.error(again) == "use_dpop_nonce")
            let fresh = try #require(again.header("DPoP-Nonce"))
            #expect(fresh != nonce)
            let refreshed = try await DPoPRequests.refresh(provider, refreshToken, proof: try key.proof("POST", provider.tokenEndpoint, nonce: fresh))
            #expect(refreshed.status == 200)

            #expect(await provider.dpopProofs(.token).map(\.error) == ["use_dpop_nonce", "use_dpop_nonce", nil, "use_dpop_nonce", nil])
            #expect(await provider.grantCount("authorization_code") == 3)
        }
    }

    @Test("after the configured uses the nonce rotates: the 200 carries the new DPoP-Nonce and the old one is challenged")
    func nonceRotation() async throws {
        try await withTestProvider(Self.configuration(.init(nonces: .required(rotatingAfter: 2)))) { provider in
            let key = try DPoPTestKey()
            let first = try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint))
            let nonce = try #require(first.header("DPoP-Nonce"))
            let once = try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint, nonce: nonce))
            #expect(once.status == 200)
            #expect(once.header("DPoP-Nonce") == nil)
            let twice = try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint, nonce: nonce))
            #expect(twice.status == 200)
            let next = try #require(twice.header("DPoP-Nonce"))
            #expect(next != nonce)
            let old = try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint, nonce: nonce))
            #expect(DPoPRequests.error(old) == "use_dpop_nonce")
            #expect(old.header("DPoP-Nonce") == next)
            #expect(try await Self.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint, nonce: next)).status == 200)
        }
    }

    @Test("a replayed proof is refused with invalid_dpop_proof")
    func replay() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let proof = try DPoPTestKey().proof("POST", provider.tokenEndpoint)
            #expect(try await Self.serviceToken(provider, proof: proof).status == 200)
            let replayed = try await Self.serviceToken(provider, proof: proof)
            #expect(replayed.status == 400)
            #expect(DPoPRequests.error(replayed) == "invalid_dpop_proof")
            #expect(await provider.dpopProofs(.token).map(\.isAccepted) == [true, false])
        }
    }

    /// A proof that breaks one rule of RFC 9449 §4.3.
    enum Broken: String, CaseIterable, CustomTestStringConvertible {
        case method, url, host, otherEndpoint, old, future, type, hmac, noneAlgorithm, privateKey, signature, noJTI, twoHeaders
        var testDescription: String { rawValue }

        func proof(_ key: DPoPTestKey, _ url: String) throws -> [String] {
            switch self {
            case .method: return [try key.proof("GET", url)]
            case .url: return [try key.proof("POST", url.replacingOccurrences(of: "/token", with: "/tokens"))]
            case .host: return [try key.proof("POST", url.replacingOccurrences(of: "127.0.0.1", with: "localhost"))]
            case .otherEndpoint: return [try key.proof("POST", url.replacingOccurrences(of: "/token", with: "/par"))]
            case .old: return [try key.proof("POST", url, issuedAt: Date().addingTimeInterval(-120))]
            case .future: return [try key.proof("POST", url, issuedAt: Date().addingTimeInterval(60))]
            case .type: return [try key.proof("POST", url, type: "JWT")]
            case .hmac:
                let unsigned = try key.proof("POST", url).split(separator: ".")
                let header = Base64URL.encode(Array(JSONValue.object(["typ": "dpop+jwt", "alg": "HS256", "jwk": .object(key.jwk)]).jsonText.utf8))
                return ["\(header).\(unsigned[1]).\(unsigned[2])"]
            case .noneAlgorithm:
                let unsigned = try key.proof("POST", url).split(separator: ".")
                let header = Base64URL.encode(Array(JSONValue.object(["typ": "dpop+jwt", "alg": "none", "jwk": .object(key.jwk)]).jsonText.utf8))
                return ["\(header).\(unsigned[1])."]
            case .privateKey: return [try key.proof("POST", url, header: ["jwk": .object(key.jwk.merging(["d": "AAAA"]) { $1 })])]
            case .signature: return [try key.proof("POST", url, header: ["jwk": .object(try DPoPTestKey().jwk)])]
            case .noJTI: return [try key.proof("POST", url, claims: ["jti": .null])]
            case .twoHeaders: return [try key.proof("POST", url), try key.proof("POST", url)]
            }
        }
    }

    @Test("a proof that breaks a rule of RFC 9449 §4.3 is refused with 400 invalid_dpop_proof and recorded so", arguments: Broken.allCases)
    func brokenProof(_ broken: Broken) async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let proofs = try broken.proof(try DPoPTestKey(), provider.tokenEndpoint)
            let response = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "client_credentials", "client_id": "service", "client_secret": "service-secret",
            ], headers: proofs.map(DPoPRequests.header))
            #expect(response.status == 400)
            #expect(DPoPRequests.error(response) == "invalid_dpop_proof")
            #expect(await provider.dpopProofs(.token).map(\.error) == ["invalid_dpop_proof"])
        }
    }

    @Test("htu is compared after normalization, without query and fragment")
    func normalizedURL() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let key = try DPoPTestKey()
            let endpoint = provider.tokenEndpoint
            for htu in [endpoint + "?x=1#f", endpoint.replacingOccurrences(of: "http://", with: "HTTP://"), endpoint.replacingOccurrences(of: "/token", with: "/%74oken")] {
                let response = try await Self.serviceToken(provider, proof: try key.proof("POST", htu))
                #expect(response.status == 200, "\(htu)")
            }
        }
    }
}
