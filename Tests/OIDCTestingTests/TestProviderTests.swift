import Foundation
import OIDC
import OIDCTesting
import Testing

/// Drives ``TestProvider`` with plain HTTP over loopback, as a client (or an attacker) would.
@Suite("The local test provider", .timeLimit(.minutes(1)))
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
        let response = try await HTTPTestClient.get(
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

    static func exchange(_ provider: TestProvider, _ login: Login, verifier: String? = nil) async throws -> HTTPTestResponse {
        try await HTTPTestClient.postForm(provider.tokenEndpoint, [
            "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
            "client_id": "test-client", "code_verifier": verifier ?? login.pkce.verifier.revealedValue,
        ])
    }

    static func refresh(_ provider: TestProvider, _ refreshToken: String) async throws -> HTTPTestResponse {
        try await HTTPTestClient.postForm(provider.tokenEndpoint, [
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

    static func me(_ provider: TestProvider, _ accessToken: String) async throws -> HTTPTestResponse {
        try await HTTPTestClient.get(
            provider.protectedResourceURL, headers: [.init(name: "Authorization", value: "Bearer \(accessToken)")]
        )
    }

    static func expectOAuthError(_ response: HTTPTestResponse, _ error: String, status: Int = 400) throws {
        #expect(response.status == status)
        #expect(try response.json()["error"] as? String == error)
        #expect(response.header("Cache-Control") == "no-store")
    }

    static func jwks(_ provider: TestProvider) async throws -> JWKSet {
        let response = try await HTTPTestClient.get(provider.jwksURI)
        #expect(response.status == 200)
        return try JWKSet(json: response.body)
    }

    static func basic(_ id: String, _ secret: String) -> HTTPTestClient.Header {
        let credentials = FormEncoding.encode(value: id) + ":" + FormEncoding.encode(value: secret)
        return .init(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
    }

    // MARK: Discovery and keys

    @Test("the discovery document names the issuer and every endpoint, PKCE S256 and RFC 9207 support")
    func discovery() async throws {
        try await withTestProvider(.init(issuerPath: "/realms/test")) { provider in
            #expect(provider.issuer == "http://127.0.0.1:\(provider.port)/realms/test")
            let response = try await HTTPTestClient.get(provider.discoveryURL)
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

            let rfc8414 = try await HTTPTestClient.get("http://127.0.0.1:\(provider.port)/.well-known/oauth-authorization-server/realms/test")
            #expect(try rfc8414.json()["issuer"] as? String == provider.issuer)
            #expect(try await HTTPTestClient.get("http://127.0.0.1:\(provider.port)/nowhere").status == 404)
            #expect(await provider.requestCount(.discovery) == 2)
        }
    }

    @Test("the JWKS publishes an RSA and an EC key, each with a kid, alg and use")
    func jwksKeys() async throws {
        try await withTestProvider { provider in
            let document = try await HTTPTestClient.get(provider.jwksURI).json()
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
            let location = try #require(try await HTTPTestClient.get(Self.authorizationURL(provider, [
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
            let userinfo = try await HTTPTestClient.get(
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

    // MARK: Authorization errors

    @Test("an unregistered redirect URI or an unknown client gets a 400 page, never a redirect")
    func unregisteredRedirect() async throws {
        try await withTestProvider { provider in
            let pkce = try PKCE.generate()
            for (client, redirect) in [
                ("test-client", "http://127.0.0.1:5000/other"),
                ("test-client", "http://localhost:5000/callback"),
                ("test-client", "http://127.0.0.1.evil.example/callback"),
                ("test-client", "https://evil.example/callback"),
                ("someone-else", Self.redirectURI),
            ] {
                let response = try await HTTPTestClient.get(Self.authorizationURL(provider, [
                    "response_type": "code", "client_id": client, "redirect_uri": redirect, "state": "s",
                    "code_challenge": pkce.challenge, "code_challenge_method": "S256",
                ]))
                #expect(response.status == 400, "\(redirect)")
                #expect(response.location == nil)
                #expect(response.header("Content-Type")?.hasPrefix("text/html") == true)
            }
        }
    }

    @Test("a loopback IP redirect URI matches on any port, and localhost only exactly (RFC 8252 §7.3)")
    func loopbackRedirectRule() async throws {
        let client = TestProvider.Client(
            id: "test-client", redirectURIs: ["http://127.0.0.1/callback", "http://localhost:8080/cb"]
        )
        try await withTestProvider(.init(clients: [client])) { provider in
            for redirect in ["http://127.0.0.1:1/callback", "http://127.0.0.1:65535/callback", "http://127.0.0.1/callback",
                "http://localhost:8080/cb"]
            {
                let login = try await Self.authorize(provider, redirectURI: redirect)
                #expect(login.code.isEmpty == false)
            }
        }
    }

    @Test("PKCE is required of public clients, and plain is refused, by an error redirect")
    func pkceRequired() async throws {
        try await withTestProvider { provider in
            let pkce = try PKCE.generate()
            for extra in [[String: String](), ["code_challenge": pkce.challenge, "code_challenge_method": "plain"],
                ["code_challenge": pkce.challenge]]
            {
                var query = ["response_type": "code", "client_id": "test-client", "redirect_uri": Self.redirectURI, "state": "xyz"]
                query.merge(extra) { $1 }
                let url = provider.authorizationEndpoint + "?" + FormEncoding.encode(query.map { OAuthParameter($0.key, $0.value) })
                let response = try await HTTPTestClient.get(url)
                #expect(response.status == 302)
                let redirect = try response.redirectParameters()
                #expect(redirect["error"] == "invalid_request")
                #expect(redirect["state"] == "xyz")
                #expect(redirect["code"] == nil)
            }
        }
    }

    @Test("a provider told to refuse redirects with the error, state and iss")
    func authorizeError() async throws {
        try await withTestProvider(.init(authorizeBehaviour: .error("access_denied", description: "No thanks"))) { provider in
            let pkce = try PKCE.generate()
            let response = try await HTTPTestClient.get(Self.authorizationURL(provider, [
                "response_type": "code", "client_id": "test-client", "redirect_uri": Self.redirectURI, "state": "st",
                "code_challenge": pkce.challenge, "code_challenge_method": "S256",
            ]))
            #expect(response.status == 302)
            let redirect = try response.redirectParameters()
            #expect(redirect["error"] == "access_denied")
            #expect(redirect["error_description"] == "No thanks")
            #expect(redirect["state"] == "st")
            #expect(redirect["iss"] == provider.issuer)
        }
    }

    @Test("the login page has a Sign in button whose form redirects with a code, once")
    func loginPage() async throws {
        try await withTestProvider(.init(authorizeBehaviour: .loginPage)) { provider in
            let pkce = try PKCE.generate()
            let page = try await HTTPTestClient.get(Self.authorizationURL(provider, [
                "response_type": "code", "client_id": "test-client", "redirect_uri": Self.redirectURI, "state": "<st>",
                "code_challenge": pkce.challenge, "code_challenge_method": "S256",
            ]))
            #expect(page.status == 200)
            #expect(page.text.contains("Sign in</button>"))
            let id = try #require(page.text.firstMatch(of: /name="request_id" value="([^"]+)"/)?.1)
            let confirm = provider.authorizationEndpoint + "/confirm"
            let response = try await HTTPTestClient.postForm(confirm, ["request_id": String(id), "action": "sign_in"])
            #expect(response.status == 302)
            let redirect = try response.redirectParameters()
            #expect(redirect["code"] != nil)
            #expect(redirect["state"] == "<st>")
            #expect(try await HTTPTestClient.postForm(confirm, ["request_id": String(id), "action": "sign_in"]).status == 400)
        }
    }

    // MARK: Client authentication

    @Test("a confidential client authenticates with client_secret_basic or _post; a wrong secret gets 401 invalid_client")
    func clientSecrets() async throws {
        var configuration = TestProvider.Configuration()
        configuration.clients = [
            .confidential(id: "basic app", secret: "s3cr:t+/", authentication: .clientSecretBasic),
            .confidential(id: "post-app", secret: "post-secret", authentication: .clientSecretPost),
        ]
        try await withTestProvider(configuration) { provider in
            // Basic: right secret, then a wrong one.
            var login = try await Self.authorize(provider, clientID: "basic app")
            let form: KeyValuePairs<String, String> = [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue,
            ]
            let wrongBasic = try await HTTPTestClient.postForm(provider.tokenEndpoint, form, headers: [Self.basic("basic app", "nope")])
            try Self.expectOAuthError(wrongBasic, "invalid_client", status: 401)
            #expect(wrongBasic.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
            login = try await Self.authorize(provider, clientID: "basic app")
            let ok = try await HTTPTestClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue,
            ], headers: [Self.basic("basic app", "s3cr:t+/")])
            #expect(ok.status == 200)

            // Post: wrong secret, then right one; and the wrong method.
            login = try await Self.authorize(provider, clientID: "post-app")
            let wrongPost = try await HTTPTestClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue, "client_id": "post-app", "client_secret": "nope",
            ])
            try Self.expectOAuthError(wrongPost, "invalid_client", status: 401)
            #expect(wrongPost.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
            let wrongMethod = try await HTTPTestClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
            ], headers: [Self.basic("post-app", "post-secret")])
            try Self.expectOAuthError(wrongMethod, "invalid_client", status: 401)
            let rightPost = try await HTTPTestClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue, "client_id": "post-app", "client_secret": "post-secret",
            ])
            #expect(rightPost.status == 200)

            let noSecret = try await HTTPTestClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": "x", "client_id": "post-app",
            ])
            try Self.expectOAuthError(noSecret, "invalid_client", status: 401)
        }
    }

    @Test("an unsupported grant, a missing parameter and a non-form body get the RFC 6749 errors")
    func tokenRequestErrors() async throws {
        try await withTestProvider { provider in
            try Self.expectOAuthError(
                try await HTTPTestClient.postForm(provider.tokenEndpoint, ["grant_type": "password", "client_id": "test-client"]),
                "unsupported_grant_type"
            )
            try Self.expectOAuthError(
                try await HTTPTestClient.postForm(provider.tokenEndpoint, ["grant_type": "authorization_code", "client_id": "test-client"]),
                "invalid_request"
            )
            try Self.expectOAuthError(
                try await HTTPTestClient.postForm(provider.tokenEndpoint, ["client_id": "test-client"]), "invalid_request"
            )
            try Self.expectOAuthError(
                try await HTTPTestClient.postForm(provider.tokenEndpoint, [
                    "grant_type": "refresh_token", "grant_type": "refresh_token", "client_id": "test-client",
                ]),
                "invalid_request"
            )
            let json = try await HTTPTestClient.send(
                "POST", provider.tokenEndpoint, headers: [.init(name: "Content-Type", value: "application/json")],
                body: Array(#"{"grant_type":"refresh_token"}"#.utf8)
            )
            try Self.expectOAuthError(json, "invalid_request")
            let emptyType = try await HTTPTestClient.send(
                "POST", provider.tokenEndpoint, headers: [.init(name: "Content-Type", value: "")], body: Array("a=b".utf8)
            )
            try Self.expectOAuthError(emptyType, "invalid_request")
            try Self.expectOAuthError(
                try await HTTPTestClient.postForm(provider.tokenEndpoint, ["grant_type": "refresh_token", "client_id": "nobody"]),
                "invalid_client", status: 401
            )
            #expect(try await HTTPTestClient.get(provider.tokenEndpoint).status == 405)
        }
    }

    // MARK: Resources, userinfo, revocation, logout

    @Test("/api/me answers 401 with WWW-Authenticate Bearer to missing, unknown and expired tokens")
    func protectedResource() async throws {
        try await withTestProvider { provider in
            let missing = try await HTTPTestClient.get(provider.protectedResourceURL)
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
            let userinfo = try await HTTPTestClient.get(
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
            let unknown = try await HTTPTestClient.postForm(provider.revocationEndpoint, ["token": "unknown", "client_id": "test-client"])
            #expect(unknown.status == 200)
            #expect(try await Self.me(provider, accessToken).status == 200)

            let revoked = try await HTTPTestClient.postForm(provider.revocationEndpoint, [
                "token": refreshToken, "token_type_hint": "refresh_token", "client_id": "test-client",
            ])
            #expect(revoked.status == 200)
            #expect(try await Self.me(provider, accessToken).status == 401)
            try Self.expectOAuthError(try await Self.refresh(provider, refreshToken), "invalid_grant")

            let (_, other) = try await Self.signIn(provider)
            let otherAccess = try #require(other["access_token"] as? String)
            _ = try await HTTPTestClient.postForm(provider.revocationEndpoint, ["token": otherAccess, "client_id": "test-client"])
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
            let response = try await HTTPTestClient.get(url)
            #expect(response.status == 302)
            #expect(response.location == "http://127.0.0.1:4321/logged-out?state=bye")

            let foreign = provider.endSessionEndpoint + "?" + FormEncoding.encode([
                OAuthParameter("client_id", "test-client"), OAuthParameter("post_logout_redirect_uri", "https://evil.example/"),
            ])
            let refused = try await HTTPTestClient.get(foreign)
            #expect(refused.status == 400)
            #expect(refused.location == nil)
            #expect(try await HTTPTestClient.get(provider.endSessionEndpoint).status == 200)
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

            let problem = try await HTTPTestClient.postForm(provider.tokenEndpoint, form)
            #expect(problem.status == 422)
            #expect(problem.header("Content-Type") == "application/problem+json")
            #expect(try problem.json()["status"] as? Int == 422)
            let html = try await HTTPTestClient.postForm(provider.tokenEndpoint, form)
            #expect(html.status == 502)
            #expect(html.header("Content-Type")?.hasPrefix("text/html") == true)
            let truncated = try await HTTPTestClient.postForm(provider.tokenEndpoint, form)
            #expect(truncated.status == 200)
            #expect((try? JSONSerialization.jsonObject(with: Data(truncated.body))) == nil)
            let oversized = try await HTTPTestClient.postForm(provider.tokenEndpoint, form)
            #expect(oversized.body.count == 1 << 20)
            #expect(try oversized.json()["access_token"] as? String == "oversized")
            try Self.expectOAuthError(try await HTTPTestClient.postForm(provider.tokenEndpoint, form), "server_error", status: 500)
            await #expect(throws: (any Error).self) { try await HTTPTestClient.postForm(provider.tokenEndpoint, form) }
            try Self.expectOAuthError(try await HTTPTestClient.postForm(provider.tokenEndpoint, form), "invalid_grant")
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

    // MARK: The listener

    @Test("the provider listens on 127.0.0.1 only, and refuses a configuration with another host")
    func loopbackOnly() async throws {
        try await withTestProvider { provider in
            #expect(await HTTPTestClient.canConnect(host: "127.0.0.1", port: provider.port))
            // Bound to 0.0.0.0 it would accept this too: 127.0.0.2 is loopback but another address.
            #expect(await HTTPTestClient.canConnect(host: "127.0.0.2", port: provider.port) == false)
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
        #expect(try await HTTPTestClient.get(provider.discoveryURL).status == 200)
        try await provider.shutdown()
        #expect(await HTTPTestClient.canConnect(host: "127.0.0.1", port: port) == false)
        try await provider.shutdown()
    }

    @Test("shutdown ends a request in flight and returns promptly")
    func shutdownDuringDelay() async throws {
        let provider = try await TestProvider.start()
        await provider.failNextRequests(1, to: .discovery, with: .delay(.seconds(30)))
        let url = provider.discoveryURL
        let request = Task { try? await HTTPTestClient.get(url) }
        // Bounded wait until the request has reached the provider.
        for _ in 0..<1000 where await provider.requestCount(.discovery) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await provider.requestCount(.discovery) == 1)
        let start = ContinuousClock.now
        try await provider.shutdown()
        #expect(ContinuousClock.now - start < .seconds(20))  // well under the 30 s the request would take
        _ = await request.value
    }

    @Test("a keep-alive connection carries several requests in order")
    func keepAlive() async throws {
        try await withTestProvider { provider in
            let host = "Host: 127.0.0.1:\(provider.port)\r\n"
            let request = "GET /jwks HTTP/1.1\r\n\(host)\r\n" + "GET /.well-known/openid-configuration HTTP/1.1\r\n\(host)Connection: close\r\n\r\n"
            let raw = String(decoding: try await HTTPTestClient.exchange(host: "127.0.0.1", port: provider.port, request: Array(request.utf8)), as: UTF8.self)
            #expect(raw.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
            #expect(raw.contains("Connection: keep-alive"))
            #expect(await provider.requestCount(.jwks) == 1)
            #expect(await provider.requestCount(.discovery) == 1)
        }
    }

    @Test("request bodies over the limit get 413")
    func bodyLimit() async throws {
        try await withTestProvider(.init(maximumRequestBodySize: 1024)) { provider in
            let response = try await HTTPTestClient.send(
                "POST", provider.tokenEndpoint,
                headers: [.init(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                body: Array(repeating: UInt8(ascii: "a"), count: 4096)
            )
            #expect(response.status == 413)
        }
    }
}
