import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// What DPoP binds at the test provider: refresh tokens, codes through `dpop_jkt` and pushed
/// requests (RFC 9449 §5, §10), and the downgrade fault.
@Suite("The test provider's DPoP bindings", .timeLimit(.scaledMinutes(1)))
struct TestProviderDPoPBindingTests {
    @Test("a public client's bound refresh token is refused without a proof or with another key's, unspent; its own key refreshes it")
    func boundRefreshToken() async throws {
        try await withTestProvider { provider in
            let key = try DPoPTestKey()
            let tokens = try await DPoPRequests.signIn(provider, key: key)
            let refreshToken = try #require(tokens["refresh_token"] as? String)

            let bare = try await DPoPRequests.refresh(provider, refreshToken, proof: nil)
            #expect(bare.status == 400)
            #expect(DPoPRequests.error(bare) == "invalid_dpop_proof")
            let other = try await DPoPRequests.refresh(provider, refreshToken, proof: try DPoPTestKey().proof("POST", provider.tokenEndpoint))
            #expect(DPoPRequests.error(other) == "invalid_dpop_proof")

            let refreshed = try await DPoPRequests.refresh(provider, refreshToken, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(refreshed.status == 200)
            let renewed = try refreshed.json()
            #expect(renewed["token_type"] as? String == "DPoP")
            let access = try await DPoPRequests.introspect(provider, try #require(renewed["access_token"] as? String))
            #expect((access["cnf"] as? [String: Any])?["jkt"] as? String == (try key.thumbprint))
        }
    }

    @Test("dpop_jkt at /authorize binds the code: another key's proof or none is refused without spending it; the bound key redeems it")
    func authorizationCodeBinding() async throws {
        try await withTestProvider { provider in
            let key = try DPoPTestKey(.es384)
            let pkce = try PKCE.generate()
            let code = try await DPoPRequests.authorize(provider, pkce: pkce, extra: ["dpop_jkt": try key.thumbprint])
            let none = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: nil)
            #expect(DPoPRequests.error(none) == "invalid_dpop_proof")
            let other = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try DPoPTestKey().proof("POST", provider.tokenEndpoint))
            #expect(DPoPRequests.error(other) == "invalid_dpop_proof")
            let redeemed = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(redeemed.status == 200)
            #expect(try redeemed.json()["token_type"] as? String == "DPoP")

            let malformed = try await RawHTTPClient.get(provider.authorizationEndpoint + "?" + FormEncoding.encode([
                OAuthParameter("response_type", "code"), OAuthParameter("client_id", "test-client"),
                OAuthParameter("redirect_uri", DPoPRequests.redirectURI), OAuthParameter("code_challenge", pkce.challenge),
                OAuthParameter("code_challenge_method", "S256"), OAuthParameter("dpop_jkt", "short"),
            ]))
            #expect(try malformed.redirectParameters()["error"] == "invalid_request")
        }
    }

    /// A push for the default client, with a proof when given and `extra` parameters.
    static func push(
        _ provider: TestProvider, pkce: PKCE, proof: String?, extra: KeyValuePairs<String, String> = [:]
    ) async throws -> RawHTTPClient.Response {
        var form = [
            OAuthParameter("response_type", "code"), OAuthParameter("client_id", "test-client"),
            OAuthParameter("redirect_uri", DPoPRequests.redirectURI), OAuthParameter("scope", "openid"),
            OAuthParameter("code_challenge", pkce.challenge), OAuthParameter("code_challenge_method", "S256"),
        ]
        form += extra.map { OAuthParameter($0.key, $0.value) }
        var headers = [RawHTTPClient.Header(name: "Content-Type", value: "application/x-www-form-urlencoded")]
        if let proof { headers.append(DPoPRequests.header(proof)) }
        return try await RawHTTPClient.send("POST", provider.issuer + "/par", headers: headers, body: Array(FormEncoding.encode(form).utf8))
    }

    @Test("a proof with a pushed request binds the code to its key (RFC 9449 §10.1); a dpop_jkt of another key is refused")
    func pushedRequestBinding() async throws {
        try await withTestProvider { provider in
            let key = try DPoPTestKey()
            let par = provider.issuer + "/par"
            let pkce = try PKCE.generate()
            let mismatch = try await Self.push(
                provider, pkce: pkce, proof: try key.proof("POST", par), extra: ["dpop_jkt": try DPoPTestKey().thumbprint]
            )
            #expect(mismatch.status == 400)
            #expect(DPoPRequests.error(mismatch) == "invalid_dpop_proof")
            let wrongURL = try await Self.push(provider, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(DPoPRequests.error(wrongURL) == "invalid_dpop_proof")

            let pushed = try await Self.push(provider, pkce: pkce, proof: try key.proof("POST", par))
            #expect(pushed.status == 201)
            let requestURI = try #require(try pushed.json()["request_uri"] as? String)
            let authorized = try await RawHTTPClient.get(provider.authorizationEndpoint + "?" + FormEncoding.encode([
                OAuthParameter("client_id", "test-client"), OAuthParameter("request_uri", requestURI),
            ]))
            let code = try #require(try authorized.redirectParameters()["code"])
            let other = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try DPoPTestKey().proof("POST", provider.tokenEndpoint))
            #expect(DPoPRequests.error(other) == "invalid_dpop_proof")
            let redeemed = try await DPoPRequests.exchange(provider, code: code, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(redeemed.status == 200)
            #expect(await provider.dpopProofs(.pushedAuthorization).map(\.error) == [nil, "invalid_dpop_proof", nil])
        }
    }

    @Test("the downgrade fault answers a DPoP token request with token_type Bearer, while the token stays bound")
    func downgradeFault() async throws {
        try await withTestProvider { provider in
            await provider.failNextTokenRequests(1, with: .downgradeToBearer)
            let key = try DPoPTestKey()
            let tokens = try await DPoPRequests.signIn(provider, key: key)
            #expect(tokens["token_type"] as? String == "Bearer")
            let accessToken = try #require(tokens["access_token"] as? String)
            #expect(try await DPoPRequests.introspect(provider, accessToken)["token_type"] as? String == "DPoP")
            let asBearer = try await DPoPRequests.get(provider.protectedResourceURL, token: accessToken, scheme: "Bearer", proof: nil)
            #expect(asBearer.status == 401)
            #expect(await provider.dpopProofs(.token).count == 1)
        }
    }

    @Test("client credentials, device code and issued tokens bind to the proof's key too")
    func otherGrants() async throws {
        try await withTestProvider(TestProviderDPoPTests.configuration()) { provider in
            let key = try DPoPTestKey()
            let service = try await TestProviderDPoPTests.serviceToken(provider, proof: try key.proof("POST", provider.tokenEndpoint))
            #expect(try service.json()["token_type"] as? String == "DPoP")
            #expect(try service.json()["refresh_token"] == nil)

            let device = try await RawHTTPClient.postForm(provider.deviceAuthorizationEndpoint, ["client_id": "test-client", "scope": "openid"])
            let deviceCode = try #require(try device.json()["device_code"] as? String)
            #expect(await provider.approveDeviceLogin(userCode: try #require(try device.json()["user_code"] as? String)))
            let polled = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode, "client_id": "test-client",
            ], headers: [DPoPRequests.header(try key.proof("POST", provider.tokenEndpoint))])
            #expect(try polled.json()["token_type"] as? String == "DPoP")

            let issued = try await provider.issueTokens(dpopKeyThumbprint: try key.thumbprint)
            #expect(issued.tokenType == "DPoP")
            let me = try await DPoPRequests.get(
                provider.protectedResourceURL, token: issued.accessToken.revealedValue,
                proof: try key.proof("GET", provider.protectedResourceURL, accessToken: issued.accessToken.revealedValue)
            )
            #expect(me.status == 200)
        }
    }
}
