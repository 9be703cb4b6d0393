import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The provider's protected resource (RFC 9728 metadata, its 401 and 403 challenges), dynamic
/// registration (RFC 7591) and resource-bound tokens (RFC 8707), over loopback HTTP.
@Suite("The test provider's protected resource and registration", .timeLimit(.scaledMinutes(1)))
struct TestProviderResourceServingTests {
    static let redirectURI = "http://127.0.0.1:53682/callback"

    static func configuration(_ change: (inout TestProvider.Configuration) -> Void = { _ in }) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.registration = TestProvider.Registration()
        change(&configuration)
        return configuration
    }

    static func register(_ provider: TestProvider, _ metadata: [String: Any]) async throws -> RawHTTPClient.Response {
        let body = try JSONSerialization.data(withJSONObject: metadata)
        return try await RawHTTPClient.send(
            "POST", provider.registrationEndpoint, headers: [.init(name: "Content-Type", value: "application/json")], body: Array(body))
    }

    static var nativeClient: [String: Any] { [
        "redirect_uris": [redirectURI], "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
        "application_type": "native", "client_name": "tests",
    ] }

    /// Authorize (with `resource` when given) and exchange; the token response.
    static func login(
        _ provider: TestProvider, clientID: String, scope: String = "read", resource: String?, redirectURI: String = redirectURI
    ) async throws -> [String: Any] {
        let pkce = try PKCE.generate()
        var query = [
            OAuthParameter("response_type", "code"), OAuthParameter("client_id", clientID), OAuthParameter("redirect_uri", redirectURI),
            OAuthParameter("scope", scope), OAuthParameter("state", "s"), OAuthParameter("code_challenge", pkce.challenge),
            OAuthParameter("code_challenge_method", "S256"),
        ]
        if let resource { query.append(OAuthParameter("resource", resource)) }
        let authorized = try await RawHTTPClient.get(provider.authorizationEndpoint + "?" + FormEncoding.encode(query))
        #expect(authorized.status == 302)
        let code = try #require(try authorized.redirectParameters()["code"])
        var form: KeyValuePairs<String, String> = [
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "client_id": clientID,
            "code_verifier": pkce.verifier.revealedValue,
        ]
        if let resource {
            form = [
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "client_id": clientID,
                "code_verifier": pkce.verifier.revealedValue, "resource": resource,
            ]
        }
        let response = try await RawHTTPClient.postForm(provider.tokenEndpoint, form)
        #expect(response.status == 200)
        return try response.json()
    }

    static func get(_ url: String, _ token: String) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.get(url, headers: [.init(name: "Authorization", value: "Bearer \(token)")])
    }

    @Test("the 401 names the metadata (after another scheme's challenge), which names the resource and the issuer")
    func challengeAndMetadata() async throws {
        let configuration = Self.configuration {
            $0.protectedResource.challengeScope = "read write"
            $0.protectedResource.precedingChallenge = "Negotiate"
        }
        try await withTestProvider(configuration) { provider in
            let missing = try await RawHTTPClient.get(provider.resourceURL)
            #expect(missing.status == 401)
            #expect(missing.headers("WWW-Authenticate") == [
                "Negotiate", #"Bearer scope="read write", resource_metadata="\#(provider.resourceMetadataURL)""#,
            ])
            #expect(provider.resourceMetadataURL == "http://127.0.0.1:\(provider.port)/.well-known/oauth-protected-resource/resource")
            let metadata = try await RawHTTPClient.get(provider.resourceMetadataURL)
            #expect(metadata.status == 200)
            let document = try metadata.json()
            #expect(document["resource"] as? String == provider.resourceURL)
            #expect(document["authorization_servers"] as? [String] == [provider.issuer])
            #expect(try await RawHTTPClient.get("http://127.0.0.1:\(provider.port)/.well-known/oauth-protected-resource").status == 404)
            let unknown = try await Self.get(provider.resourceURL, "not-a-token")
            #expect(unknown.header("WWW-Authenticate") == #"Bearer error="invalid_token", resource_metadata="\#(provider.resourceMetadataURL)""#)
            #expect(await provider.requestCount(.resourceMetadata) == 2)
        }
    }

    @Test("a registered native client logs in for the resource: the token's aud is the resource, and the step-up route wants admin")
    func registrationAndResourceBoundTokens() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let registered = try await Self.register(provider, Self.nativeClient)
            #expect(registered.status == 201)
            let answer = try registered.json()
            let clientID = try #require(answer["client_id"] as? String)
            #expect(answer["client_secret"] == nil)
            #expect(answer["registration_access_token"] is String)
            #expect(answer["registration_client_uri"] as? String == provider.registrationEndpoint + "/" + clientID)
            #expect(await provider.registeredClientIDs() == [clientID])

            let tokens = try await Self.login(provider, clientID: clientID, resource: provider.resourceURL)
            let accessToken = try #require(tokens["access_token"] as? String)
            let claims = try UnverifiedJWT(accessToken).claims
            #expect(claims["aud"]?.stringValue == provider.resourceURL)
            #expect(try await Self.get(provider.resourceURL, accessToken).status == 200)
            let stepUp = try await Self.get(provider.stepUpResourceURL, accessToken)
            #expect(stepUp.status == 403)
            #expect(stepUp.header("WWW-Authenticate") == #"Bearer error="insufficient_scope", scope="admin", resource_metadata="\#(provider.resourceMetadataURL)""#)

            let admin = try await Self.login(provider, clientID: clientID, scope: "read admin", resource: provider.resourceURL)
            #expect(try await Self.get(provider.stepUpResourceURL, try #require(admin["access_token"] as? String)).status == 200)

            // A token for no resource, or for another one, is refused here.
            let unbound = try await Self.login(provider, clientID: clientID, resource: nil)
            #expect(try await Self.get(provider.resourceURL, try #require(unbound["access_token"] as? String)).status == 401)
            let other = try await Self.login(provider, clientID: clientID, resource: "https://other.example/api")
            #expect(try await Self.get(provider.resourceURL, try #require(other["access_token"] as? String)).status == 401)

            // A refresh keeps the audience; another resource than the login's is invalid_target.
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            let refreshed = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID, "resource": "https://other.example/api",
            ])
            #expect(try refreshed.json()["error"] as? String == "invalid_target")
            let kept = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID, "resource": provider.resourceURL,
            ])
            #expect(try await Self.get(provider.resourceURL, try #require(try kept.json()["access_token"] as? String)).status == 200)
        }
    }

    @Test("exact loopback matching refuses another port; forgotten registrations are unknown clients; DELETE needs the token")
    func exactPortsAndForgetting() async throws {
        try await withTestProvider(Self.configuration { $0.registration?.exactLoopbackPort = true }) { provider in
            let answer = try await Self.register(provider, Self.nativeClient).json()
            let clientID = try #require(answer["client_id"] as? String)
            let otherPort = try await RawHTTPClient.get(
                provider.authorizationEndpoint + "?" + FormEncoding.encode([
                    OAuthParameter("response_type", "code"), OAuthParameter("client_id", clientID),
                    OAuthParameter("redirect_uri", "http://127.0.0.1:53683/callback"),
                ]))
            #expect(otherPort.status == 400)
            _ = try await Self.login(provider, clientID: clientID, resource: nil)

            let uri = try #require(answer["registration_client_uri"] as? String)
            #expect(try await RawHTTPClient.send("DELETE", uri, headers: [.init(name: "Authorization", value: "Bearer wrong")]).status == 401)
            let token = try #require(answer["registration_access_token"] as? String)
            #expect(try await RawHTTPClient.send("DELETE", uri, headers: [.init(name: "Authorization", value: "Bearer \(token)")]).status == 204)
            #expect(await provider.registeredClientIDs().isEmpty)

            let second = try await Self.register(provider, Self.nativeClient).json()
            #expect(await provider.registrationCount() == 2)
            await provider.forgetRegistrations()
            let refused = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": "x", "client_id": try #require(second["client_id"] as? String),
            ])
            #expect(try refused.json()["error"] as? String == "invalid_client")
        }
    }

    @Test("bad registrations are refused with RFC 7591 errors")
    func registrationRefusals() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            #expect(try await Self.register(provider, ["client_name": "x"]).json()["error"] as? String == "invalid_redirect_uri")
            #expect(try await Self.register(provider, ["redirect_uris": ["http://127.0.0.1/cb#f"]]).json()["error"] as? String == "invalid_redirect_uri")
            let method = try await Self.register(provider, ["redirect_uris": [Self.redirectURI], "token_endpoint_auth_method": "magic"])
            #expect(try method.json()["error"] as? String == "invalid_client_metadata")
            let duplicate = try await RawHTTPClient.send(
                "POST", provider.registrationEndpoint, headers: [.init(name: "Content-Type", value: "application/json")],
                body: Array(#"{"redirect_uris":["http://127.0.0.1/a"],"redirect_uris":["http://127.0.0.1/b"]}"#.utf8))
            #expect(try duplicate.json()["error"] as? String == "invalid_client_metadata")
            let confidential = try await Self.register(provider, ["redirect_uris": [Self.redirectURI]]).json()
            #expect(confidential["client_secret"] is String)
            #expect(confidential["token_endpoint_auth_method"] as? String == "client_secret_basic")
        }
        try await withTestProvider { provider in
            let refused = try await Self.register(provider, Self.nativeClient)
            #expect(refused.status == 404)
        }
    }

    @Test("a plain OAuth server serves RFC 8414 metadata only, without jwks_uri, and issues no ID token")
    func plainOAuthServer() async throws {
        try await withTestProvider(Self.configuration { $0.metadataDocuments = .oauthOnly }) { provider in
            #expect(try await RawHTTPClient.get(provider.discoveryURL).status == 404)
            let document = try await RawHTTPClient.get(provider.authorizationServerMetadataURL).json()
            #expect(document["issuer"] as? String == provider.issuer)
            #expect(document["jwks_uri"] == nil)
            #expect(document["registration_endpoint"] as? String == provider.registrationEndpoint)
            let clientID = try #require(try await Self.register(provider, Self.nativeClient).json()["client_id"] as? String)
            let tokens = try await Self.login(provider, clientID: clientID, scope: "openid read", resource: provider.resourceURL)
            #expect(tokens["id_token"] == nil)
        }
    }

    @Test("a provider like Entra refuses resource on a refresh with invalid_target")
    func resourceRefusedOnRefresh() async throws {
        try await withTestProvider(Self.configuration { $0.protectedResource.refusesResourceOnRefresh = true }) { provider in
            let clientID = try #require(try await Self.register(provider, Self.nativeClient).json()["client_id"] as? String)
            let tokens = try await Self.login(provider, clientID: clientID, resource: provider.resourceURL)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            let refused = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID, "resource": provider.resourceURL,
            ])
            #expect(try refused.json()["error"] as? String == "invalid_target")
            let plain = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID,
            ])
            let access = try #require(try plain.json()["access_token"] as? String)
            #expect(try await Self.get(provider.resourceURL, access).status == 200)
        }
    }
}
