import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Client credentials, introspection and token exchange against TestProvider over loopback HTTP.
@Suite("Grants without a person: client credentials, introspection, token exchange", .timeLimit(.scaledMinutes(1)))
struct ServiceGrantsTests {
    static let daemon = TestProvider.Client.confidential(id: "daemon", secret: "daemon-secret-daemon-secret-32-b")
    static var configuration: TestProvider.Configuration {
        var daemon = Self.daemon
        daemon.allowedScopes = ["reports.read", "reports.write"]
        return TestProvider.Configuration(clients: [.default, daemon])
    }

    @Test("client credentials: an access token for the client itself, no refresh or ID token; a scope beyond the client's is invalid_scope; a public client is refused before sending")
    func clientCredentials() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let rp = try await provider.relyingParty(client: Self.daemon)
            let tokens = try await rp.tokenClient.clientCredentials(scopes: ["reports.read"], parameters: [OAuthParameter("resource", "https://api.example")])
            #expect(tokens.refreshToken == nil && tokens.idToken == nil)
            #expect(tokens.scopes == ["reports.read"])
            let me = try await rp.transport.send(HTTPRequest(url: provider.protectedResource, headers: ["Authorization": "Bearer \(tokens.accessToken.revealedValue)"]))
            #expect(me.status == 200 && String(decoding: me.body, as: UTF8.self).contains("\"sub\":\"daemon\""))
            #expect(try #require(await provider.tokenRequestParameters().last)["resource"] == "https://api.example")

            let tooMuch = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials(scopes: ["admin"]) }
            #expect(tooMuch?.providerError?.error == "invalid_scope")
            let reserved = await #expect(throws: OIDCError.self) {
                try await rp.tokenClient.clientCredentials(parameters: [OAuthParameter("client_id", "someone-else")])
            }
            #expect(reserved?.code == .invalidArgument)

            let sent = await provider.requestCount(.token)
            let publicClient = try await provider.relyingParty()
            let refused = await #expect(throws: OIDCError.self) { try await publicClient.tokenClient.clientCredentials() }
            #expect(refused?.code == .invalidArgument)
            #expect(await provider.requestCount(.token) == sent)
        }
    }

    @Test("a service session asks once for 20 callers, reuses the token, and asks again when the resource refuses it")
    func serviceSession() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let rp = try await provider.relyingParty(client: Self.daemon)
            let session = rp.serviceSession(scopes: ["reports.read"], allowlist: .default(for: provider.protectedResource))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await session.send(HTTPRequest(url: provider.protectedResource)).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 20))
            #expect(await provider.grantCount("client_credentials") == 1)
            await provider.expireAccessTokens()
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            #expect(await provider.grantCount("client_credentials") == 2)
            #expect(await provider.grantCount("refresh_token") == 0)
        }
    }

    @Test("service sessions of several processes over one FileKeychain: an expired token is replaced by one request, under the lock")
    func sharedStore() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let rp = try await provider.relyingParty(client: Self.daemon)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cc-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let sessions = try (0..<6).map { _ in
                rp.serviceSession(allowlist: .default(for: provider.protectedResource), store: try FileKeychain(directory: directory))
            }
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for session in sessions { group.addTask { try await session.validTokens().accessToken.revealedValue } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(await provider.grantCount("client_credentials") == 1)
            let stored = try #require(try FileKeychain(directory: directory).load(rp.serviceSessionKey()))
            #expect(stored.clientID == "daemon" && stored.provider?.tokenEndpoint?.absoluteString == provider.tokenEndpoint)
        }
    }

    @Test("sessions of one client asking for other scopes share a store without taking each other's tokens")
    func requestsKeptApart() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let rp = try await provider.relyingParty(client: Self.daemon)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cc-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let allowlist = HostAllowlist.default(for: provider.protectedResource)
            let reader = rp.serviceSession(scopes: ["reports.read"], allowlist: allowlist, store: try FileKeychain(directory: directory))
            let writer = rp.serviceSession(scopes: ["reports.write"], allowlist: allowlist, store: try FileKeychain(directory: directory))
            #expect(reader.key != writer.key && reader.key.account.hasPrefix("daemon#"))
            #expect(try await reader.validTokens().scopes == ["reports.read"])
            #expect(try await writer.validTokens().scopes == ["reports.write"])
            #expect(try await reader.validTokens().scopes == ["reports.read"])
            #expect(await provider.grantCount("client_credentials") == 2)
            let other = try await provider.relyingParty(client: Self.daemon)
            #expect(other.serviceSessionKey(scopes: ["reports.read"]) == reader.key)
            #expect(rp.serviceSessionKey(scopes: ["reports.read"], parameters: [OAuthParameter("resource", "https://a.example")]) != reader.key)
        }
    }

    @Test("a login of another issuer or client under the session's key is refused before anything is sent, and kept")
    func foreignLoginRefused() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let store = InMemoryTokenStore()
            let key = TokenStoreKey(service: "app", account: "shared")
            let tokens = try await provider.issueTokens()
            let foreign = StoredLogin(tokens: tokens, issuer: "https://staging.example.com", clientID: "test-client", subject: "test-user")
            await store.save(foreign, for: key)
            let rp = try await provider.relyingParty()
            for session in [rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource))] {
                let error = await #expect(throws: OIDCError.self) { try await session.validTokens(forceRefresh: true) }
                #expect(error?.code == .invalidArgument && error?.endsLogin == false, "\(String(describing: error))")
                #expect(error?.message.contains("https://staging.example.com") == true)
                let sending = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
                #expect(sending?.code == .invalidArgument)
            }
            var otherClient = foreign
            otherClient.issuer = provider.issuer
            otherClient.clientID = "daemon"
            await store.save(otherClient, for: key)
            let second = rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource))
            await #expect(throws: OIDCError.self) { try await second.validTokens() }
            #expect(await provider.grantCount("refresh_token") == 0)
            #expect(await provider.requestCount(.protectedResource) == 0)
            #expect(await store.load(key) != nil)
        }
    }

    @Test("a refused client (invalid_client) keeps nothing and logs nobody out; the next call asks again")
    func refusedClient() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let rp = try await provider.relyingParty(client: Self.daemon, authentication: .clientSecretBasic(Secret("wrong")))
            let session = rp.serviceSession(allowlist: .default(for: provider.protectedResource))
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
            #expect(error?.providerError?.error == "invalid_client" && error?.endsLogin == false)
            _ = try? await session.send(HTTPRequest(url: provider.protectedResource))
            #expect(await provider.grantCount("client_credentials") == 2)
        }
    }

    @Test("introspection: an active token of this client described and typed; a revoked one, or another client's, is just inactive")
    func introspection() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let daemon = try await provider.relyingParty(client: Self.daemon)
            let tokens = try await daemon.tokenClient.clientCredentials(scopes: ["reports.read", "reports.write"])
            let active = try await daemon.tokenClient.introspect(tokens.accessToken, hint: .accessToken)
            #expect(active.active && active.clientID == "daemon" && active.subject == "daemon")
            #expect(active.scopes == ["reports.read", "reports.write"] && active.tokenType == "Bearer")
            #expect(active.issuer == provider.issuer && active.audience == ["daemon"])
            #expect(try #require(active.expiresAt) > Date())

            let user = try await provider.issueTokens()
            let foreign = try await daemon.tokenClient.introspect(user.accessToken)
            #expect(!foreign.active && foreign.clientID == nil && foreign.raw.count == 1)
            try await daemon.tokenClient.revoke(tokens.accessToken, hint: .accessToken)
            #expect(try await daemon.tokenClient.introspect(tokens.accessToken).active == false)
            #expect(await provider.requestCount(.introspection) == 3)
        }
    }

    @Test("introspection of a token for a resource (RFC 8707): described to any client that authenticates (the resource's server), aud the resource; not to a public client")
    func introspectionByTheResourceServer() async throws {
        let api = TestProvider.Client.confidential(id: "orders-api", secret: "orders-api-secret-orders-api-32b")
        var configuration = Self.configuration
        configuration.clients.append(api)
        try await withTestProvider(configuration) { provider in
            var daemon = try await provider.relyingParty(client: Self.daemon).tokenClient
            daemon.resource = "https://api.example/orders"
            let tokens = try await daemon.clientCredentials(scopes: ["reports.read"])
            let server = try await provider.relyingParty(client: api)
            let described = try await server.tokenClient.introspect(tokens.accessToken, hint: .accessToken)
            #expect(described.active && described.clientID == "daemon" && described.audience == ["https://api.example/orders"])
            let publicClient = try await provider.relyingParty()
            #expect(try await publicClient.tokenClient.introspect(tokens.accessToken).active == false)
        }
    }

    @Test("introspection answers are checked: active is required and boolean; the standard members have their types")
    func introspectionParsing() throws {
        for bad in [#"{}"#, #"{"active":"true"}"#, #"{"active":1}"#, #"{"active":true,"exp":"soon"}"#, #"{"active":true,"aud":[1]}"#, "[]"] {
            let error = #expect(throws: OIDCError.self, "\(bad)") { try TokenIntrospection(answer: Array(bad.utf8)) }
            #expect(error?.code == .malformedResponse)
        }
        let answer = try TokenIntrospection(answer: Array(#"{"active":true,"aud":"api","cnf":{"jkt":"abc"},"username":"alice"}"#.utf8))
        #expect(answer.audience == ["api"] && answer.username == "alice" && answer.raw["cnf"]?.objectValue?["jkt"] == "abc")
        let inactive = try TokenIntrospection(answer: Array(#"{"active":false,"username":"ignored"}"#.utf8))
        #expect(!inactive.active && inactive.username == nil)
    }

    @Test("token exchange: a user's access token for a new one, issued_token_type read; an actor token needs its type")
    func tokenExchange() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let daemon = try await provider.relyingParty(client: Self.daemon)
            let user = try await provider.issueTokens(scope: "openid profile offline_access")
            var request = TokenExchangeRequest(subjectToken: user.accessToken)
            request.scopes = ["profile"]
            request.audiences = ["reports-api"]
            let result = try await daemon.tokenClient.exchangeToken(request)
            #expect(result.issuedTokenType == TokenExchangeRequest.TokenType.accessToken)
            #expect(result.tokens.refreshToken == nil && result.tokens.scopes == ["profile"])
            let me = try await daemon.transport.send(
                HTTPRequest(url: provider.protectedResource, headers: ["Authorization": "Bearer \(result.tokens.accessToken.revealedValue)"])
            )
            #expect(me.status == 200 && String(decoding: me.body, as: UTF8.self).contains("test-user"))
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["subject_token_type"] == TokenExchangeRequest.TokenType.accessToken && sent["audience"] == "reports-api")

            request.actorToken = Secret("actor")
            let untyped = await #expect(throws: OIDCError.self) { try await daemon.tokenClient.exchangeToken(request) }
            #expect(untyped?.code == .invalidArgument)
            var dead = TokenExchangeRequest(subjectToken: Secret("not-a-token"))
            dead.scopes = ["profile"]
            let refused = await #expect(throws: OIDCError.self) { try await daemon.tokenClient.exchangeToken(dead) }
            #expect(refused?.providerError?.error == "invalid_grant")
            #expect(refused?.description.contains("not-a-token") == false)
        }
    }

    @Test("token exchange for an ID token: the answer's token_type N_A and issued_token_type are read through exchangeToken")
    func exchangeForAnIDToken() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let daemon = try await provider.relyingParty(client: Self.daemon)
            let user = try await provider.issueTokens(scope: "openid profile")
            var request = TokenExchangeRequest(subjectToken: user.accessToken)
            request.requestedTokenType = TokenExchangeRequest.TokenType.idToken
            let result = try await daemon.tokenClient.exchangeToken(request)
            #expect(result.tokens.tokenType == "N_A" && result.issuedTokenType == TokenExchangeRequest.TokenType.idToken)
            let claims = try UnverifiedJWT(result.tokens.accessToken.revealedValue).claims
            #expect(claims["sub"] == "test-user" && claims["aud"] == "daemon")
            #expect(await provider.tokenRequestParameters().last?["requested_token_type"] == TokenExchangeRequest.TokenType.idToken)
        }
    }

    @Test("a token response of type N_A is read only where it is allowed: a token exchange's answer")
    func notApplicableTokenType() throws {
        let body = Array(#"{"access_token":"a-saml-assertion","token_type":"N_A","issued_token_type":"urn:ietf:params:oauth:token-type:saml2"}"#.utf8)
        let tokens = try TokenSet(tokenResponse: body, requestedScopes: [], receivedAt: Date(), acceptedTypes: ["Bearer", "N_A"])
        #expect(tokens.tokenType == "N_A")
        let error = #expect(throws: OIDCError.self) { try TokenSet(tokenAnswer: body, requestedScopes: [], receivedAt: Date()) }
        #expect(error?.code == .malformedResponse)
    }
}
