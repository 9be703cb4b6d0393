import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Drives ``TestProvider`` with plain HTTP over loopback, as a client (or an attacker) would.
@Suite("The local test provider", .timeLimit(.scaledMinutes(1)))
struct TestProviderTests {
    static let redirectURI = "http://127.0.0.1:53682/callback"

    /// One authorization request's secrets and the redirect it got.
    struct Login {
        var pkce: PKCE
        var state: String
        var nonce: String
        var redirectURI: String
        var code: String
        var redirect: [String: String]
    }

    static func authorizationURL(_ provider: TestProvider, _ parameters: KeyValuePairs<String, String>) -> String {
        provider.authorizationEndpoint + "?" + FormEncoding.encode(parameters.map { OAuthParameter($0.key, $0.value) })
    }

    /// `/authorize` as the signed-in test user; returns the code and the redirect's parameters.
    static func authorize(
        _ provider: TestProvider, clientID: String = "test-client", redirectURI: String = redirectURI,
        scope: String = "openid profile email offline_access", state: String? = nil
    ) async throws -> Login {
        let pkce = try PKCE.generate()
        let state = try state ?? RandomToken.generate()
        let nonce = try RandomToken.generate()
        let response = try await RawHTTPClient.get(
            authorizationURL(provider, [
                "response_type": "code", "client_id": clientID, "redirect_uri": redirectURI, "scope": scope,
                "state": state, "nonce": nonce, "code_challenge": pkce.challenge, "code_challenge_method": "S256",
            ])
        )
        #expect(response.status == 302)
        let redirect = try response.redirectParameters()
        let code = try #require(redirect["code"])
        return Login(pkce: pkce, state: state, nonce: nonce, redirectURI: redirectURI, code: code, redirect: redirect)
    }

    static func exchange(_ provider: TestProvider, _ login: Login, verifier: String? = nil) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.postForm(provider.tokenEndpoint, [
            "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
            "client_id": "test-client", "code_verifier": verifier ?? login.pkce.verifier.revealedValue,
        ])
    }

    static func refresh(_ provider: TestProvider, _ refreshToken: String) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.postForm(provider.tokenEndpoint, [
            "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": "test-client",
        ])
    }

    /// A full login: authorize, then exchange; the token response as JSON.
    static func signIn(_ provider: TestProvider) async throws -> (login: Login, tokens: [String: Any]) {
        let login = try await authorize(provider)
        let response = try await exchange(provider, login)
        #expect(response.status == 200)
        return (login, try response.json())
    }

    static func me(_ provider: TestProvider, _ accessToken: String) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.get(
            provider.protectedResourceURL, headers: [.init(name: "Authorization", value: "Bearer \(accessToken)")]
        )
    }

    static func expectOAuthError(_ response: RawHTTPClient.Response, _ error: String, status: Int = 400) throws {
        #expect(response.status == status)
        #expect(try response.json()["error"] as? String == error)
        #expect(response.header("Cache-Control") == "no-store")
    }

    static func jwks(_ provider: TestProvider) async throws -> JWKSet {
        let response = try await RawHTTPClient.get(provider.jwksURI)
        #expect(response.status == 200)
        return try JWKSet(json: response.body)
    }

    static func basic(_ id: String, _ secret: String) -> RawHTTPClient.Header {
        let credentials = FormEncoding.encode(value: id) + ":" + FormEncoding.encode(value: secret)
        return .init(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
    }

    // MARK: Discovery and keys

    @Test("the discovery document names the issuer and every endpoint, PKCE S256 and RFC 9207 support")
    func discovery() async throws {
        try await withTestProvider(.init(issuerPath: "/realms/test")) { provider in
            #expect(provider.issuer == "http://127.0.0.1:\(provider.port)/realms/test")
            let response = try await RawHTTPClient.get(provider.discoveryURL)
            #expect(response.status == 200)
            let document = try response.json()
            #expect(document["issuer"] as? String == provider.issuer)
            #expect(document["authorization_endpoint"] as? String == provider.authorizationEndpoint)
            #expect(document["token_endpoint"] as? String == provider.tokenEndpoint)
            #expect(document["jwks_uri"] as? String == provider.jwksURI)
            #expect(document["userinfo_endpoint"] as? String == provider.userinfoEndpoint)
            #expect(document["revocation_endpoint"] as? String == provider.revocationEndpoint)
            #expect(document["end_session_endpoint"] as? String == provider.endSessionEndpoint)
            #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"])
            #expect(document["authorization_response_iss_parameter_supported"] as? Bool == true)
            #expect(document["response_types_supported"] as? [String] == ["code"])
            #expect(Set(document["token_endpoint_auth_methods_supported"] as? [String] ?? []) == [
                "none", "client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt",
            ])
            #expect((document["token_endpoint_auth_signing_alg_values_supported"] as? [String])?.contains("ES256") == true)
            #expect(Set(document["id_token_signing_alg_values_supported"] as? [String] ?? []) == ["RS256", "ES256"])

            let rfc8414 = try await RawHTTPClient.get("http://127.0.0.1:\(provider.port)/.well-known/oauth-authorization-server/realms/test")
            #expect(try rfc8414.json()["issuer"] as? String == provider.issuer)
            #expect(try await RawHTTPClient.get("http://127.0.0.1:\(provider.port)/nowhere").status == 404)
            #expect(await provider.requestCount(.discovery) == 2)
        }
    }

    @Test("the JWKS publishes an RSA and an EC key, each with a kid, alg and use")
    func jwksKeys() async throws {
        try await withTestProvider { provider in
            let document = try await RawHTTPClient.get(provider.jwksURI).json()
            let keys = try #require(document["keys"] as? [[String: Any]])
            #expect(keys.count == 2)
            #expect(Set(keys.compactMap { $0["kty"] as? String }) == ["RSA", "EC"])
            #expect(Set(keys.compactMap { $0["alg"] as? String }) == ["RS256", "ES256"])
            #expect(keys.allSatisfy { ($0["kid"] as? String)?.isEmpty == false && $0["use"] as? String == "sig" })
            #expect(keys.allSatisfy { $0["d"] == nil })
            #expect(try await Self.jwks(provider).keys.count == 2)
            #expect(await provider.requestCount(.jwks) == 2)
        }
    }

    // MARK: The code flow

    @Test("a full code flow with PKCE yields tokens whose ID token verifies against the provider's JWKS")
    func fullCodeFlow() async throws {
        var configuration = TestProvider.Configuration()
        configuration.user = TestUser(
            subject: "user-42", name: "Ada", email: "ada@example.com", amr: ["pwd", "otp"], acr: "urn:mfa",
            extraClaims: ["locale": .string("sv-SE")]
        )
        configuration.accessTokenLifetime = 120
        try await withTestProvider(configuration) { provider in
            let login = try await Self.authorize(provider, state: "a b&c=d/é")
            #expect(login.redirect["state"] == "a b&c=d/é")
            #expect(login.redirect["iss"] == provider.issuer)
            let location = try #require(try await RawHTTPClient.get(Self.authorizationURL(provider, [
                "response_type": "code", "client_id": "test-client", "redirect_uri": Self.redirectURI,
                "state": "a b&c", "code_challenge": login.pkce.challenge, "code_challenge_method": "S256",
            ])).location)
            #expect(location.hasPrefix(Self.redirectURI + "?code="))
            #expect(location.contains("&state=a%20b%26c&iss=http%3A%2F%2F127.0.0.1%3A"))

            let response = try await Self.exchange(provider, login)
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "no-store")
            let tokens = try response.json()
            let accessToken = try #require(tokens["access_token"] as? String)
            #expect(tokens["token_type"] as? String == "Bearer")
            #expect(tokens["expires_in"] as? Int == 120)
            #expect(tokens["refresh_token"] is String)
            #expect(tokens["scope"] as? String == "openid profile email offline_access")

            var verifier = IDTokenVerifier(issuer: provider.issuer, clientID: "test-client", nonce: .expected(login.nonce))
            verifier.accessToken = Secret(accessToken)
            verifier.requiredAMRValues = ["otp"]
            verifier.acceptedACRValues = ["urn:mfa"]
            let idToken = try verifier.verify(try #require(tokens["id_token"] as? String), keys: try await Self.jwks(provider))
            #expect(idToken.algorithm == .rs256)
            #expect(idToken.claims.subject == "user-42")

            let parts = try #require(tokens["id_token"] as? String).split(separator: ".")
            let payload = try #require(Base64URL.decode(String(parts[1])))
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            #expect(claims["aud"] as? String == "test-client")
            #expect(claims["auth_time"] is Int)
            #expect(claims["at_hash"] is String)
            #expect(claims["name"] as? String == "Ada")
            #expect(claims["locale"] as? String == "sv-SE")

            let me = try await Self.me(provider, accessToken)
            #expect(me.status == 200)
            #expect(try me.json()["sub"] as? String == "user-42")
            let userinfo = try await RawHTTPClient.get(
                provider.userinfoEndpoint, headers: [.init(name: "Authorization", value: "Bearer \(accessToken)")]
            )
            #expect(userinfo.status == 200)
            let info = try userinfo.json()
            #expect(info["sub"] as? String == "user-42")
            #expect(info["email"] as? String == "ada@example.com")
            #expect(await provider.grantCount("authorization_code") == 1)
            #expect(await provider.requestCount(.authorize) == 2)
        }
    }

    @Test("ID tokens are signed ES256 when configured, and verify")
    func es256() async throws {
        try await withTestProvider(.init(idTokenAlgorithm: .es256)) { provider in
            let (login, tokens) = try await Self.signIn(provider)
            var verifier = IDTokenVerifier(issuer: provider.issuer, clientID: "test-client", nonce: .expected(login.nonce))
            verifier.accessToken = Secret(try #require(tokens["access_token"] as? String))
            let idToken = try verifier.verify(try #require(tokens["id_token"] as? String), keys: try await Self.jwks(provider))
            #expect(idToken.algorithm == .es256)
            #expect(idToken.keyID?.hasPrefix("ec-") == true)
        }
    }

    @Test("a wrong code verifier gets invalid_grant")
    func wrongVerifier() async throws {
        try await withTestProvider { provider in
            let login = try await Self.authorize(provider)
            let other = try PKCE.generate()
            try Self.expectOAuthError(try await Self.exchange(provider, login, verifier: other.verifier.revealedValue), "invalid_grant")
        }
    }

    @Test("a reused code gets invalid_grant and revokes the tokens issued from it")
    func reusedCode() async throws {
        try await withTestProvider { provider in
            let login = try await Self.authorize(provider)
            let tokens = try await Self.exchange(provider, login).json()
            let accessToken = try #require(tokens["access_token"] as? String)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            #expect(try await Self.me(provider, accessToken).status == 200)

            try Self.expectOAuthError(try await Self.exchange(provider, login), "invalid_grant")
            #expect(try await Self.me(provider, accessToken).status == 401)
            try Self.expectOAuthError(try await Self.refresh(provider, refreshToken), "invalid_grant")
        }
    }

    @Test("an expired code gets invalid_grant")
    func expiredCode() async throws {
        try await withTestProvider { provider in
            let login = try await Self.authorize(provider)
            await provider.advanceClock(by: 61)
            try Self.expectOAuthError(try await Self.exchange(provider, login), "invalid_grant")
        }
    }

    @Test("refresh rotates the token; a reused refresh token gets invalid_grant and revokes the whole family")
    func refreshReuse() async throws {
        try await withTestProvider { provider in
            let (_, tokens) = try await Self.signIn(provider)
            let first = try #require(tokens["refresh_token"] as? String)
            let refreshed = try await Self.refresh(provider, first)
            #expect(refreshed.status == 200)
            let rotated = try refreshed.json()
            let second = try #require(rotated["refresh_token"] as? String)
            #expect(second != first)
            let secondAccess = try #require(rotated["access_token"] as? String)

            var verifier = IDTokenVerifier(issuer: provider.issuer, clientID: "test-client", nonce: .absent)
            verifier.accessToken = Secret(secondAccess)
            let idToken = try verifier.verify(try #require(rotated["id_token"] as? String), keys: try await Self.jwks(provider))
            #expect(idToken.claims.subject == "test-user")

            try Self.expectOAuthError(try await Self.refresh(provider, first), "invalid_grant")
            try Self.expectOAuthError(try await Self.refresh(provider, second), "invalid_grant")
            #expect(try await Self.me(provider, secondAccess).status == 401)
            #expect(try await Self.me(provider, try #require(tokens["access_token"] as? String)).status == 401)
            #expect(await provider.grantCount("refresh_token") == 3)
        }
    }

    @Test("without rotation the refresh token stays valid and refresh responses omit it")
    func refreshWithoutRotation() async throws {
        try await withTestProvider(.init(refreshTokenRotation: false)) { provider in
            let (_, tokens) = try await Self.signIn(provider)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            for _ in 0..<2 {
                let response = try await Self.refresh(provider, refreshToken)
                #expect(response.status == 200)
                let body = try response.json()
                #expect(body["refresh_token"] == nil)
                #expect(body["access_token"] is String)
            }
            #expect(await provider.grantCount("refresh_token") == 2)
        }
    }

    // MARK: The listener

    @Test("the provider listens on 127.0.0.1 only, and refuses a configuration with another host")
    func loopbackOnly() async throws {
        try await withTestProvider { provider in
            #expect(await RawHTTPClient.canConnect(host: "127.0.0.1", port: provider.port))
            // Bound to 0.0.0.0 it would accept this too: 127.0.0.2 is loopback but another address.
            #expect(await RawHTTPClient.canConnect(host: "127.0.0.2", port: provider.port) == false)
        }
        for host in ["0.0.0.0", "localhost", "192.0.2.1", "::", "example.com"] {
            await #expect(throws: OIDCError.self) { _ = try await TestProvider.start(.init(host: host)) }
        }
        await #expect(throws: OIDCError.self) { _ = try await TestProvider.start(.init(issuerPath: "no-slash")) }
    }

    @Test("after shutdown nothing accepts connections, and a second shutdown is harmless")
    func shutdown() async throws {
        let provider = try await TestProvider.start()
        let port = provider.port
        #expect(try await RawHTTPClient.get(provider.discoveryURL).status == 200)
        try await provider.shutdown()
        #expect(await RawHTTPClient.canConnect(host: "127.0.0.1", port: port) == false)
        try await provider.shutdown()
    }

    @Test("shutdown ends a request in flight and returns promptly")
    func shutdownDuringDelay() async throws {
        let provider = try await TestProvider.start()
        await provider.failNextRequests(1, to: .discovery, with: .delay(.scaled(.seconds(30))))
        let url = provider.discoveryURL
        let request = Task { try? await RawHTTPClient.get(url) }
        // Bounded wait until the request has reached the provider.
        for _ in 0..<TestTime.scaled(1000) where await provider.requestCount(.discovery) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await provider.requestCount(.discovery) == 1)
        let start = ContinuousClock.now
        try await provider.shutdown()
        #expect(ContinuousClock.now - start < .scaled(.seconds(20)))  // well under the (scaled) 30 s the request would take
        _ = await request.value
    }

    @Test("a keep-alive connection carries several requests in order")
    func keepAlive() async throws {
        try await withTestProvider { provider in
            let host = "Host: 127.0.0.1:\(provider.port)\r\n"
            let request = "GET /jwks HTTP/1.1\r\n\(host)\r\n" + "GET /.well-known/openid-configuration HTTP/1.1\r\n\(host)Connection: close\r\n\r\n"
            let raw = String(decoding: try await RawHTTPClient.rawExchange("127.0.0.1", provider.port, Array(request.utf8)), as: UTF8.self)
            #expect(raw.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
            #expect(raw.contains("Connection: keep-alive"))
            #expect(await provider.requestCount(.jwks) == 1)
            #expect(await provider.requestCount(.discovery) == 1)
        }
    }

    @Test("request bodies over the limit get 413")
    func bodyLimit() async throws {
        try await withTestProvider(.init(maximumRequestBodySize: 1024)) { provider in
            let response = try await RawHTTPClient.send(
                "POST", provider.tokenEndpoint,
                headers: [.init(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                body: Array(repeating: UInt8(ascii: "a"), count: 4096)
            )
            #expect(response.status == 413)
        }
    }
}
