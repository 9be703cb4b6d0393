import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The provider's resource, userinfo, revocation and logout; faults, counters and keys.
extension TestProviderTests {
    // MARK: Resources, userinfo, revocation, logout

    @Test("/api/me answers 401 with WWW-Authenticate Bearer to missing, unknown and expired tokens")
    func protectedResource() async throws {
        try await withTestProvider { provider in
            let missing = try await RawHTTPClient.get(provider.protectedResourceURL)
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate") == "Bearer")
            let unknown = try await Self.me(provider, "not-a-token")
            #expect(unknown.status == 401)
            #expect(unknown.header("WWW-Authenticate") == #"Bearer error="invalid_token""#)

            let (_, tokens) = try await Self.signIn(provider)
            let accessToken = try #require(tokens["access_token"] as? String)
            #expect(try await Self.me(provider, accessToken).status == 200)
            await provider.expireAccessTokens()
            let expired = try await Self.me(provider, accessToken)
            #expect(expired.status == 401)
            #expect(expired.header("WWW-Authenticate") == #"Bearer error="invalid_token""#)
            let userinfo = try await RawHTTPClient.get(
                provider.userinfoEndpoint, headers: [.init(name: "Authorization", value: "Bearer \(accessToken)")]
            )
            #expect(userinfo.status == 401)

            let refreshed = try await Self.refresh(provider, try #require(tokens["refresh_token"] as? String)).json()
            #expect(try await Self.me(provider, try #require(refreshed["access_token"] as? String)).status == 200)
            #expect(await provider.requestCount(.protectedResource) == 5)
        }
    }

    @Test("access tokens expire after the configured lifetime")
    func accessTokenLifetime() async throws {
        try await withTestProvider(.init(accessTokenLifetime: 30)) { provider in
            let (_, tokens) = try await Self.signIn(provider)
            let accessToken = try #require(tokens["access_token"] as? String)
            #expect(tokens["expires_in"] as? Int == 30)
            await provider.advanceClock(by: 31)
            #expect(try await Self.me(provider, accessToken).status == 401)
        }
    }

    @Test("revoking a refresh token revokes its family; unknown tokens are answered 200")
    func revocation() async throws {
        try await withTestProvider { provider in
            let (_, tokens) = try await Self.signIn(provider)
            let accessToken = try #require(tokens["access_token"] as? String)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            let unknown = try await RawHTTPClient.postForm(provider.revocationEndpoint, ["token": "unknown", "client_id": "test-client"])
            #expect(unknown.status == 200)
            #expect(try await Self.me(provider, accessToken).status == 200)

            let revoked = try await RawHTTPClient.postForm(provider.revocationEndpoint, [
                "token": refreshToken, "token_type_hint": "refresh_token", "client_id": "test-client",
            ])
            #expect(revoked.status == 200)
            #expect(try await Self.me(provider, accessToken).status == 401)
            try Self.expectOAuthError(try await Self.refresh(provider, refreshToken), "invalid_grant")

            let (_, other) = try await Self.signIn(provider)
            let otherAccess = try #require(other["access_token"] as? String)
            _ = try await RawHTTPClient.postForm(provider.revocationEndpoint, ["token": otherAccess, "client_id": "test-client"])
            #expect(try await Self.me(provider, otherAccess).status == 401)
            #expect(try await Self.refresh(provider, try #require(other["refresh_token"] as? String)).status == 200)
            #expect(await provider.requestCount(.revocation) == 3)
        }
    }

    @Test("end-session redirects to a registered post-logout URI with state, and refuses others with a page")
    func endSession() async throws {
        try await withTestProvider { provider in
            let (_, tokens) = try await Self.signIn(provider)
            let idToken = try #require(tokens["id_token"] as? String)
            let url = provider.endSessionEndpoint + "?" + FormEncoding.encode([
                OAuthParameter("id_token_hint", idToken),
                OAuthParameter("post_logout_redirect_uri", "http://127.0.0.1:4321/logged-out"),
                OAuthParameter("state", "bye"),
            ])
            let response = try await RawHTTPClient.get(url)
            #expect(response.status == 302)
            #expect(response.location == "http://127.0.0.1:4321/logged-out?state=bye")

            let foreign = provider.endSessionEndpoint + "?" + FormEncoding.encode([
                OAuthParameter("client_id", "test-client"), OAuthParameter("post_logout_redirect_uri", "https://evil.example/"),
            ])
            let refused = try await RawHTTPClient.get(foreign)
            #expect(refused.status == 400)
            #expect(refused.location == nil)
            #expect(try await RawHTTPClient.get(provider.endSessionEndpoint).status == 200)
            #expect(await provider.requestCount(.endSession) == 3)
        }
    }

    // MARK: Faults and counters

    @Test("the next token calls fail with 503, then invalid_grant, then succeed; counters see every call")
    func faults() async throws {
        try await withTestProvider { provider in
            let (_, tokens) = try await Self.signIn(provider)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            await provider.failNextTokenRequests(2, with: .serviceUnavailable)
            await provider.failNextTokenRequests(1, with: .invalidGrant)
            for _ in 0..<2 {
                let unavailable = try await Self.refresh(provider, refreshToken)
                #expect(unavailable.status == 503)
                #expect(unavailable.header("Retry-After") == "1")
            }
            try Self.expectOAuthError(try await Self.refresh(provider, refreshToken), "invalid_grant")
            #expect(try await Self.refresh(provider, refreshToken).status == 200)
            #expect(await provider.requestCount(.token) == 5)
            #expect(await provider.grantCount("refresh_token") == 4)
            #expect(await provider.grantCount("authorization_code") == 1)
            await provider.resetCounters()
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("a delay fault answers normally, but late")
    func delayFault() async throws {
        try await withTestProvider { provider in
            await provider.failNextTokenRequests(1, with: .delay(.milliseconds(400)))
            let login = try await Self.authorize(provider)
            let start = ContinuousClock.now
            let response = try await Self.exchange(provider, login)
            #expect(ContinuousClock.now - start >= .milliseconds(400))
            #expect(response.status == 200)
        }
    }

    @Test("problem+json, HTML, truncated and oversized answers, and a dropped connection, can be injected")
    func errorShapes() async throws {
        try await withTestProvider { provider in
            let form: KeyValuePairs<String, String> = ["grant_type": "refresh_token", "refresh_token": "x", "client_id": "test-client"]
            await provider.failNextTokenRequests(1, with: .problemJSON(status: 422))
            await provider.failNextTokenRequests(1, with: .htmlError())
            await provider.failNextTokenRequests(1, with: .truncatedJSON)
            await provider.failNextTokenRequests(1, with: .oversizedBody(byteCount: 1 << 20))
            await provider.failNextTokenRequests(1, with: .oauthError("server_error", status: 500))
            await provider.failNextTokenRequests(1, with: .dropConnection)

            let problem = try await RawHTTPClient.postForm(provider.tokenEndpoint, form)
            #expect(problem.status == 422)
            #expect(problem.header("Content-Type") == "application/problem+json")
            #expect(try problem.json()["status"] as? Int == 422)
            let html = try await RawHTTPClient.postForm(provider.tokenEndpoint, form)
            #expect(html.status == 502)
            #expect(html.header("Content-Type")?.hasPrefix("text/html") == true)
            let truncated = try await RawHTTPClient.postForm(provider.tokenEndpoint, form)
            #expect(truncated.status == 200)
            #expect((try? JSONSerialization.jsonObject(with: Data(truncated.body))) == nil)
            let oversized = try await RawHTTPClient.postForm(provider.tokenEndpoint, form)
            #expect(oversized.body.count == 1 << 20)
            #expect(try oversized.json()["access_token"] as? String == "oversized")
            try Self.expectOAuthError(try await RawHTTPClient.postForm(provider.tokenEndpoint, form), "server_error", status: 500)
            await #expect(throws: (any Error).self) { try await RawHTTPClient.postForm(provider.tokenEndpoint, form) }
            try Self.expectOAuthError(try await RawHTTPClient.postForm(provider.tokenEndpoint, form), "invalid_grant")
        }
    }

    // MARK: Keys

    @Test("after a key rotation new ID tokens carry a new kid and verify; the old keys stay published once")
    func keyRotation() async throws {
        try await withTestProvider { provider in
            let (_, before) = try await Self.signIn(provider)
            let oldToken = try #require(before["id_token"] as? String)
            let oldKid = try Self.headerKeyID(oldToken)
            try await provider.rotateKeys()
            let (login, after) = try await Self.signIn(provider)
            let newToken = try #require(after["id_token"] as? String)
            let newKid = try Self.headerKeyID(newToken)
            #expect(newKid != oldKid)
            let keys = try await Self.jwks(provider)
            #expect(keys.keys.count == 4)
            let verifier = IDTokenVerifier(issuer: provider.issuer, clientID: "test-client", nonce: .expected(login.nonce))
            #expect(try verifier.verify(newToken, keys: keys).keyID == newKid)
            var old = verifier
            old.nonce = .notChecked
            #expect(try old.verify(oldToken, keys: keys).keyID == oldKid)

            try await provider.rotateKeys()
            let twiceRotated = try await Self.jwks(provider)
            #expect(twiceRotated.keys.count == 4)
            #expect(throws: OIDCError.self) { try old.verify(oldToken, keys: twiceRotated) }
        }
    }

    /// The `kid` of a token's header, unverified.
    static func headerKeyID(_ token: String) throws -> String {
        let header = try #require(Base64URL.decode(String(token.split(separator: ".")[0])))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
        return try #require(object["kid"] as? String)
    }
}
