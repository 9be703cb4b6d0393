import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The provider's refusals: authorization errors and client authentication.
extension TestProviderTests {
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
                let response = try await RawHTTPClient.get(Self.authorizationURL(provider, [
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
                let response = try await RawHTTPClient.get(url)
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
            let response = try await RawHTTPClient.get(Self.authorizationURL(provider, [
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
            let page = try await RawHTTPClient.get(Self.authorizationURL(provider, [
                "response_type": "code", "client_id": "test-client", "redirect_uri": Self.redirectURI, "state": "<st>",
                "code_challenge": pkce.challenge, "code_challenge_method": "S256",
            ]))
            #expect(page.status == 200)
            #expect(page.text.contains("Sign in</button>"))
            let id = try #require(page.text.firstMatch(of: /name="request_id" value="([^"]+)"/)?.1)
            let confirm = provider.authorizationEndpoint + "/confirm"
            let response = try await RawHTTPClient.postForm(confirm, ["request_id": String(id), "action": "sign_in"])
            #expect(response.status == 302)
            let redirect = try response.redirectParameters()
            #expect(redirect["code"] != nil)
            #expect(redirect["state"] == "<st>")
            #expect(try await RawHTTPClient.postForm(confirm, ["request_id": String(id), "action": "sign_in"]).status == 400)
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
            let wrongBasic = try await RawHTTPClient.postForm(provider.tokenEndpoint, form, headers: [Self.basic("basic app", "nope")])
            try Self.expectOAuthError(wrongBasic, "invalid_client", status: 401)
            #expect(wrongBasic.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
            login = try await Self.authorize(provider, clientID: "basic app")
            let ok = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue,
            ], headers: [Self.basic("basic app", "s3cr:t+/")])
            #expect(ok.status == 200)

            // Post: wrong secret, then right one; and the wrong method.
            login = try await Self.authorize(provider, clientID: "post-app")
            let wrongPost = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue, "client_id": "post-app", "client_secret": "nope",
            ])
            try Self.expectOAuthError(wrongPost, "invalid_client", status: 401)
            #expect(wrongPost.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
            let wrongMethod = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
            ], headers: [Self.basic("post-app", "post-secret")])
            try Self.expectOAuthError(wrongMethod, "invalid_client", status: 401)
            let rightPost = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "authorization_code", "code": login.code, "redirect_uri": login.redirectURI,
                "code_verifier": login.pkce.verifier.revealedValue, "client_id": "post-app", "client_secret": "post-secret",
            ])
            #expect(rightPost.status == 200)

            let noSecret = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": "x", "client_id": "post-app",
            ])
            try Self.expectOAuthError(noSecret, "invalid_client", status: 401)
        }
    }

    @Test("an unsupported grant, a missing parameter and a non-form body get the RFC 6749 errors")
    func tokenRequestErrors() async throws {
        try await withTestProvider { provider in
            try Self.expectOAuthError(
                try await RawHTTPClient.postForm(provider.tokenEndpoint, ["grant_type": "password", "client_id": "test-client"]),
                "unsupported_grant_type"
            )
            try Self.expectOAuthError(
                try await RawHTTPClient.postForm(provider.tokenEndpoint, ["grant_type": "authorization_code", "client_id": "test-client"]),
                "invalid_request"
            )
            try Self.expectOAuthError(
                try await RawHTTPClient.postForm(provider.tokenEndpoint, ["client_id": "test-client"]), "invalid_request"
            )
            try Self.expectOAuthError(
                try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                    "grant_type": "refresh_token", "grant_type": "refresh_token", "client_id": "test-client",
                ]),
                "invalid_request"
            )
            let json = try await RawHTTPClient.send(
                "POST", provider.tokenEndpoint, headers: [.init(name: "Content-Type", value: "application/json")],
                body: Array(#"{"grant_type":"refresh_token"}"#.utf8)
            )
            try Self.expectOAuthError(json, "invalid_request")
            let emptyType = try await RawHTTPClient.send(
                "POST", provider.tokenEndpoint, headers: [.init(name: "Content-Type", value: "")], body: Array("a=b".utf8)
            )
            try Self.expectOAuthError(emptyType, "invalid_request")
            try Self.expectOAuthError(
                try await RawHTTPClient.postForm(provider.tokenEndpoint, ["grant_type": "refresh_token", "client_id": "nobody"]),
                "invalid_client", status: 401
            )
            #expect(try await RawHTTPClient.get(provider.tokenEndpoint).status == 405)
        }
    }
}
