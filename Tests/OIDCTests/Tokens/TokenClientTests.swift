import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The token endpoint, userinfo and revocation against ``TestProvider`` over real HTTP
/// on loopback, through the production transport.
@Suite("Token client and discovery", .timeLimit(.scaledMinutes(1)))
struct TokenClientTests {
    static let redirectURI = "http://127.0.0.1:53682/callback"

    /// Runs `body` with a provider and the production transport, and shuts both down.
    static func withProvider(
        _ configuration: TestProvider.Configuration = .init(), _ body: (TestProvider, NIOHTTPTransport) async throws -> Void
    ) async throws {
        let transport = NIOHTTPTransport()
        do {
            try await withTestProvider(configuration) { provider in try await body(provider, transport) }
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }

    /// Discovery, then an authorization request to the provider's endpoint, "signed in" by
    /// fetching it without following the redirect, and the callback handled by the request.
    static func authorize(
        _ provider: TestProvider, _ transport: NIOHTTPTransport, clientID: String = "test-client", confidential: Bool = false,
        scopes: [String] = ["openid", "profile", "offline_access"], configure: (inout AuthorizationRequest) -> Void = { _ in }
    ) async throws -> (AuthorizationRequest, AuthorizationResponse, ProviderConfiguration) {
        let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
        let configuration = try metadata.configuration(confidential: confidential)
        var request = try AuthorizationRequest(provider: configuration, clientID: clientID, redirectURI: redirectURI, scopes: scopes)
        configure(&request)
        let answer = try await transport.send(HTTPRequest(url: try request.url()))
        #expect(answer.status == 302)
        let location = try #require(answer.headers["Location"].flatMap(URL.init(string:)))
        guard case .authorized(let response) = try request.handleRedirect(location) else {
            Issue.record("the provider's redirect was not an authorization response: \(location)")
            throw CancellationError()
        }
        return (request, response, configuration)
    }

    static func client(_ configuration: ProviderConfiguration, _ transport: NIOHTTPTransport, clientID: String = "test-client", secret: String? = nil) -> TokenClient {
        TokenClient(provider: configuration, clientID: clientID, clientSecret: secret.map(Secret.init), transport: transport)
    }

    static func keys(_ provider: TestProvider, _ transport: NIOHTTPTransport) -> JWKSCache {
        JWKSCache(transport: transport, jwksURI: URL(string: provider.jwksURI)!)
    }

    // MARK: Code flow

    @Test("a full code flow with PKCE: exchange, ID token verified with nonce and at_hash, userinfo for the same user")
    func codeFlow() async throws {
        try await Self.withProvider { provider, transport in
            let (request, response, configuration) = try await Self.authorize(provider, transport)
            #expect(response.issuer == provider.issuer)
            let client = Self.client(configuration, transport)
            let login = try await client.completeLogin(response, for: request, keys: Self.keys(provider, transport))
            #expect(login.idToken.claims.subject == "test-user")
            #expect(login.idToken.claims.nonce == request.nonce)
            #expect(login.tokens.refreshToken != nil)
            #expect(login.tokens.scopes == ["openid", "profile", "offline_access"])
            let expiresIn = try #require(login.tokens.expiresAt).timeIntervalSince(login.tokens.receivedAt)
            #expect(expiresIn == 3600)
            let claims = try await client.userinfo(accessToken: login.tokens.accessToken, expectedSubject: login.idToken.claims.subject)
            #expect(claims["email"] == .string("test.user@example.com"))
            let other = await #expect(throws: OIDCError.self) { try await client.userinfo(accessToken: login.tokens.accessToken, expectedSubject: "someone-else") }
            #expect(other?.code == .invalidClaim)
            let stale = await #expect(throws: OIDCError.self) { try await client.userinfo(accessToken: Secret("not-a-token"), expectedSubject: "test-user") }
            #expect(stale?.providerError?.error == "invalid_token")
        }
    }

    @Test("ES256 ID tokens and a rotated key verify; the new kid refetches the keys once")
    func rotation() async throws {
        try await Self.withProvider(.init(idTokenAlgorithm: .es256)) { provider, transport in
            let keys = JWKSCache(transport: transport, jwksURI: URL(string: provider.jwksURI)!, unknownKeyCooldown: 0)
            let (request, response, configuration) = try await Self.authorize(provider, transport)
            _ = try await Self.client(configuration, transport).completeLogin(response, for: request, keys: keys)
            try await provider.rotateKeys()
            let (request2, response2, _) = try await Self.authorize(provider, transport)
            let login = try await Self.client(configuration, transport).completeLogin(response2, for: request2, keys: keys)
            #expect(login.idToken.algorithm == .es256)
            #expect(await keys.fetchesRun == 2)
        }
    }

    @Test("a wrong verifier, a reused code and a code exchange that failed are never retried")
    func codeErrors() async throws {
        try await Self.withProvider { provider, transport in
            let (request, response, configuration) = try await Self.authorize(provider, transport)
            let client = Self.client(configuration, transport)
            let wrong = await #expect(throws: OIDCError.self) {
                try await client.exchangeCode(response.code, codeVerifier: try PKCE.generate().verifier, redirectURI: request.redirectURI)
            }
            #expect(wrong?.code == .providerError)
            #expect(wrong?.category == .provider)
            #expect(wrong?.providerError?.error == "invalid_grant")
            #expect(wrong?.context["status"] == "400")
            let reused = await #expect(throws: OIDCError.self) { try await client.completeLogin(response, for: request, keys: Self.keys(provider, transport)) }
            #expect(reused?.providerError?.error == "invalid_grant")
            for error in [wrong, reused].compactMap({ $0 }) {
                #expect(!error.description.contains(response.code.revealedValue))
                #expect(!error.description.contains(request.pkce!.verifier.revealedValue))
            }

            let (request2, response2, _) = try await Self.authorize(provider, transport)
            await provider.failNextTokenRequests(1, with: .serviceUnavailable)
            let unavailable = await #expect(throws: OIDCError.self) { try await client.completeLogin(response2, for: request2, keys: Self.keys(provider, transport)) }
            #expect(unavailable?.code == .serverError)
            #expect(unavailable?.category == .transient)
            #expect(await provider.grantCount("authorization_code") == 3)
        }
    }

    @Test("a nonce the provider did not echo, or an MFA the ID token does not show, fails the login")
    func verificationFailures() async throws {
        var configuration = TestProvider.Configuration()
        configuration.user.amr = ["pwd"]
        try await Self.withProvider(configuration) { provider, transport in
            let (request, response, providerConfiguration) = try await Self.authorize(provider, transport) { $0.requiredAMRValues = ["otp"] }
            let error = await #expect(throws: OIDCError.self) {
                try await Self.client(providerConfiguration, transport).completeLogin(response, for: request, keys: Self.keys(provider, transport))
            }
            #expect(error?.code == .invalidClaim)
            #expect(error?.context["claim"] == "amr")

            // The provider puts the nonce it was sent into the ID token; a login expecting another fails.
            let (sent, answer, _) = try await Self.authorize(provider, transport)
            var expecting = sent
            expecting.nonce = String(repeating: "n", count: 43)
            let nonceError = await #expect(throws: OIDCError.self) {
                try await Self.client(providerConfiguration, transport).completeLogin(answer, for: expecting, keys: Self.keys(provider, transport))
            }
            #expect(nonceError?.code == .nonceMismatch)
        }
    }

    // MARK: Refresh and revocation

    @Test("refresh with rotation: a new refresh token, and the spent one is refused")
    func refreshRotation() async throws {
        try await Self.withProvider { provider, transport in
            let (request, response, configuration) = try await Self.authorize(provider, transport)
            let client = Self.client(configuration, transport)
            let login = try await client.completeLogin(response, for: request, keys: Self.keys(provider, transport))
            let first = try #require(login.tokens.refreshToken)
            let answer = try await client.refresh(first)
            let merged = login.tokens.refreshed(with: answer)
            #expect(merged.refreshToken != first)
            #expect(merged.accessToken != login.tokens.accessToken)
            let reuse = await #expect(throws: OIDCError.self) { try await client.refresh(first) }
            #expect(reuse?.providerError?.error == "invalid_grant")
            #expect(!(reuse?.description.contains(first.revealedValue) ?? true))
        }
    }

    @Test("refresh without rotation: the answer has no refresh token and the old one is kept")
    func refreshWithoutRotation() async throws {
        try await Self.withProvider(.init(refreshTokenRotation: false)) { provider, transport in
            let (request, response, configuration) = try await Self.authorize(provider, transport)
            let client = Self.client(configuration, transport)
            let login = try await client.completeLogin(response, for: request, keys: Self.keys(provider, transport))
            let answer = try await client.refresh(try #require(login.tokens.refreshToken))
            #expect(answer.refreshToken == nil)
            let merged = login.tokens.refreshed(with: answer)
            #expect(merged.refreshToken == login.tokens.refreshToken)
            _ = try await client.refresh(try #require(merged.refreshToken))
            #expect(await provider.grantCount("refresh_token") == 2)
        }
    }

    @Test("revoking the refresh token ends the login (RFC 7009); an unknown token is not an error")
    func revocation() async throws {
        try await Self.withProvider { provider, transport in
            let (request, response, configuration) = try await Self.authorize(provider, transport)
            let client = Self.client(configuration, transport)
            let login = try await client.completeLogin(response, for: request, keys: Self.keys(provider, transport))
            try await client.revoke(try #require(login.tokens.refreshToken), hint: .refreshToken)
            let dead = await #expect(throws: OIDCError.self) { try await client.refresh(login.tokens.refreshToken!) }
            #expect(dead?.providerError?.error == "invalid_grant")
            try await client.revoke(Secret("never-issued"))
            let url = try client.endSessionURL(idTokenHint: login.tokens.idToken, postLogoutRedirectURI: "http://127.0.0.1/logged-out", state: "s 1")
            #expect(url.absoluteString.hasPrefix(provider.endSessionEndpoint + "?client_id=test-client&id_token_hint="))
            #expect(url.absoluteString.hasSuffix("&post_logout_redirect_uri=http%3A%2F%2F127.0.0.1%2Flogged-out&state=s%201"))
            let logout = try await transport.send(HTTPRequest(url: url))
            #expect(logout.status == 302)
        }
    }

    // MARK: Client authentication

    @Test("confidential clients: client_secret_basic with RFC 6749 §2.3.1 encoding and client_secret_post; a wrong secret is invalid_client",
          arguments: [TestProvider.ClientAuthentication.clientSecretBasic, .clientSecretPost])
    func confidential(method: TestProvider.ClientAuthentication) async throws {
        let id = "srv:app 1", secret = "s%e:c+r t/ä"
        let configuration = TestProvider.Configuration(clients: [.confidential(id: id, secret: secret, authentication: method, redirectURIs: [Self.redirectURI])])
        try await Self.withProvider(configuration) { provider, transport in
            var (request, response, providerConfiguration) = try await Self.authorize(provider, transport, clientID: id, confidential: true)
            providerConfiguration.clientAuthentication = method == .clientSecretBasic ? .clientSecretBasic : .clientSecretPost
            let login = try await Self.client(providerConfiguration, transport, clientID: id, secret: secret)
                .completeLogin(response, for: request, keys: Self.keys(provider, transport))
            #expect(login.idToken.claims.audience == [id])

            (request, response, _) = try await Self.authorize(provider, transport, clientID: id, confidential: true)
            let error = await #expect(throws: OIDCError.self) {
                try await Self.client(providerConfiguration, transport, clientID: id, secret: "Xq9-bad-secret").completeLogin(response, for: request, keys: Self.keys(provider, transport))
            }
            #expect(error?.providerError?.error == "invalid_client")
            #expect(error?.context["status"] == "401")
            #expect(!(error?.description.contains("Xq9-bad-secret") ?? true))
            let missing = await #expect(throws: OIDCError.self) {
                try await Self.client(providerConfiguration, transport, clientID: id).refresh(Secret("x"))
            }
            #expect(missing?.code == .invalidArgument)
        }
    }

    @Test("the Swan preset's confidential exchange sends client_id and client_secret in the body")
    func swanShape() async throws {
        let configuration = TestProvider.Configuration(clients: [.confidential(id: "SANDBOX_x", secret: "swan-secret", authentication: .clientSecretPost, redirectURIs: [Self.redirectURI])])
        try await Self.withProvider(configuration) { provider, transport in
            var swan = ProviderConfiguration.swan
            #expect(swan.clientAuthentication == .clientSecretPost)
            swan.issuer = provider.issuer
            swan.authorizationEndpoint = URL(string: provider.authorizationEndpoint)!
            swan.tokenEndpoint = URL(string: provider.tokenEndpoint)!
            var request = try AuthorizationRequest(provider: swan, clientID: "SANDBOX_x", redirectURI: Self.redirectURI)
            #expect(request.scopes == ["openid", "offline"])
            request.scopes = ["openid", "offline_access"]
            let answer = try await transport.send(HTTPRequest(url: try request.url()))
            guard case .authorized(let response) = try request.handleRedirect(URL(string: answer.headers["Location"]!)!) else { throw CancellationError() }
            let login = try await Self.client(swan, transport, clientID: "SANDBOX_x", secret: "swan-secret")
                .completeLogin(response, for: request, keys: Self.keys(provider, transport))
            #expect(login.idToken.claims.subject == "test-user")
        }
    }

    @Test("Schibsted's token requests carry X-OIDC: v1")
    func schibstedHeader() async throws {
        try await Self.withProvider { provider, transport in
            let recorder = RecordingTransport(transport)
            var schibsted = ProviderConfiguration.schibsted(.pre)
            schibsted.tokenEndpoint = URL(string: provider.tokenEndpoint)!
            let client = TokenClient(provider: schibsted, clientID: "test-client", transport: recorder)
            _ = try? await client.refresh(Secret("r"))
            let sent = try #require(await recorder.requests.first)
            #expect(sent.headers["X-OIDC"] == "v1")
            #expect(String(decoding: sent.body, as: UTF8.self).hasPrefix("client_id=test-client&grant_type=refresh_token&refresh_token=r"))
        }
    }

    // MARK: Error classes

    @Test("each failure becomes the right typed error class", arguments: [
        (TestProvider.Fault.invalidGrant, OIDCError.Code.providerError, OIDCError.Category.provider),
        (.oauthError("invalid_request", status: 400), .providerError, .provider),
        (.oauthError("invalid_client", status: 401), .providerError, .provider),
        (.oauthError("unauthorized_client", status: 400), .providerError, .provider),
        (.oauthError("temporarily_unavailable", status: 400), .serverError, .transient),
        (.oauthError("server_error", status: 500), .serverError, .transient),
        (.serviceUnavailable, .serverError, .transient),
        (.problemJSON(status: 400), .providerError, .provider),
        (.problemJSON(status: 503), .serverError, .transient),
        (.htmlError(status: 502), .serverError, .transient),
        (.htmlError(status: 403), .malformedResponse, .provider),
        (.emptyBody(status: 401), .providerError, .provider),
        (.emptyBody(status: 403), .providerError, .provider),
        (.emptyBody(status: 404), .malformedResponse, .provider),
        (.truncatedJSON, .malformedResponse, .provider),
        (.oversizedBody(byteCount: 2 << 20), .responseTooLarge, .provider),
        (.dropConnection, .networkFailure, .transient),
        (.delay(.seconds(3)), .timedOut, .transient),
    ])
    func errorClasses(fault: TestProvider.Fault, code: OIDCError.Code, category: OIDCError.Category) async throws {
        try await Self.withProvider { provider, transport in
            var configuration = ProviderConfiguration(issuer: provider.issuer, authorizationEndpoint: URL(string: provider.authorizationEndpoint)!)
            configuration.tokenEndpoint = URL(string: provider.tokenEndpoint)!
            var client = Self.client(configuration, transport)
            // Generous for the answers (the whole suite runs in parallel on two cores), short for the delay.
            if case .delay = fault { client.requestOptions.timeout = .seconds(1) } else { client.requestOptions.timeout = .scaled(.seconds(20)) }
            await provider.failNextTokenRequests(1, with: fault)
            let error = await #expect(throws: OIDCError.self) { try await client.refresh(Secret("refresh-secret-value")) }
            #expect(error?.code == code, "\(error?.description ?? "")")
            #expect(error?.category == category)
            #expect(!(error?.description.contains("refresh-secret-value") ?? true))
        }
    }

    @Test("a connection refused is a transient network failure")
    func refused() async throws {
        let transport = NIOHTTPTransport()
        var configuration = ProviderConfiguration(issuer: "http://127.0.0.1:1", authorizationEndpoint: URL(string: "http://127.0.0.1:1/a")!)
        configuration.tokenEndpoint = URL(string: "http://127.0.0.1:1/token")!
        let error = await #expect(throws: OIDCError.self) { try await Self.client(configuration, transport).refresh(Secret("r")) }
        #expect(error?.code == .networkFailure)
        #expect(error?.category == .transient)
        try await transport.shutdown()
    }

    @Test("token responses: absolute expiry, string expires_in, missing scope means the requested one; bad ones are malformed")
    func tokenResponses() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let set = try TokenSet(tokenAnswer: Array(#"{"access_token":"a","token_type":"bearer","expires_in":"60"}"#.utf8), requestedScopes: ["openid"], receivedAt: now)
        #expect(set.expiresAt == now.addingTimeInterval(60))
        #expect(set.scopes == ["openid"])
        // DPoP-bound tokens (RFC 9449) are token sets too; another scheme is not.
        #expect(try TokenSet(tokenAnswer: Array(#"{"access_token":"a","token_type":"DPoP"}"#.utf8), requestedScopes: [], receivedAt: now).tokenType == "DPoP")
        for body in [#"{"token_type":"Bearer"}"#, #"{"access_token":"a"}"#, #"{"access_token":"a","token_type":"MAC"}"#,
                     #"{"access_token":"a","token_type":"Bearer","expires_in":-1}"#, #"{"access_token":1,"token_type":"Bearer"}"#, "<html>"] {
            #expect(throws: OIDCError.self) { try TokenSet(tokenAnswer: Array(body.utf8), requestedScopes: [], receivedAt: now) }
        }
    }
}

/// Passes requests to a real transport and keeps a copy of each, to look at what was sent.
actor RecordingTransport: HTTPTransport {
    let inner: any HTTPTransport
    private(set) var requests: [HTTPRequest] = []

    init(_ inner: any HTTPTransport) { self.inner = inner }

    func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
        requests.append(request)
        return try await inner.send(request, options: options)
    }
}

@Suite("Token client: encodings and secrets", .timeLimit(.scaledMinutes(1)))
struct TokenClientEncodingTests {
    @Test("client_secret_basic encodes id and secret as forms before Base64 (RFC 6749 §2.3.1): a known answer")
    func basicKnownAnswer() async throws {
        try await withNIOHTTPTransport { transport in
            try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 400, [("Content-Type", "application/json")], body: Array(#"{"error":"invalid_grant"}"#.utf8))) }) { server in
                let recorder = RecordingTransport(transport)
                var provider = ProviderConfiguration(issuer: "http://127.0.0.1", authorizationEndpoint: server.url("/a"), clientAuthentication: .clientSecretBasic)
                provider.tokenEndpoint = server.url("/token")
                let client = TokenClient(provider: provider, clientID: "a b:c", clientSecret: Secret("d%e+f"), transport: recorder)
                _ = try? await client.refresh(Secret("r"))
                // "a+b%3Ac:d%25e%2Bf" in Base64, computed by hand.
                #expect(await recorder.requests.first?.headers["Authorization"] == "Basic YStiJTNBYzpkJTI1ZSUyQmY=")
            }
        }
    }

    @Test("a provider that echoes the refresh token or client secret in its error does not get it printed")
    func echoedSecrets() async throws {
        try await withNIOHTTPTransport { transport in
            let body = #"{"error":"invalid_grant","error_description":"refresh token SUPERSECRET-RT for secret CLIENTSECRET is not valid"}"#
            try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 400, [("Content-Type", "application/json")], body: Array(body.utf8))) }) { server in
                var provider = ProviderConfiguration(issuer: "http://127.0.0.1", authorizationEndpoint: server.url("/a"), clientAuthentication: .clientSecretPost)
                provider.tokenEndpoint = server.url("/token")
                let client = TokenClient(provider: provider, clientID: "c", clientSecret: Secret("CLIENTSECRET"), transport: transport)
                let error = await #expect(throws: OIDCError.self) { try await client.refresh(Secret("SUPERSECRET-RT")) }
                let text = "\(error?.description ?? "") \(error?.providerError?.errorDescription ?? "")"
                #expect(text.contains("<redacted>"))
                #expect(!text.contains("SUPERSECRET-RT") && !text.contains("CLIENTSECRET"))
            }
        }
    }
}

/// Security review 4, L2: a token with terminal escapes in it is refused when it is read, so that
/// `oidc token` and `oidc exchange` can never print it.
@Suite("Token responses: tokens are VSCHAR", .timeLimit(.scaledMinutes(1)))
struct TokenCharacterTests {
    static let escapes = "AT\u{1B}]0;owned-title\u{07}\u{1B}[2Jlooks-like-a-token"

    @Test("access_token, refresh_token and id_token outside 0x20-0x7E are refused, naming the member but not the token",
          arguments: ["access_token", "refresh_token", "id_token"])
    func refused(member: String) throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for bad in [Self.escapes, "AT\u{7F}x", "caf\u{E9}-token", "a\nb", "a\tb"] {
            var object: [String: String] = ["access_token": "a", "token_type": "Bearer"]
            object[member] = bad
            let body = try JSONSerialization.data(withJSONObject: object)
            let error = #expect(throws: OIDCError.self) { try TokenSet(tokenAnswer: Array(body), requestedScopes: [], receivedAt: now) }
            #expect(error?.code == .malformedResponse)
            #expect(error?.context["parameter"] == member)
            let text = "\(error?.description ?? "") \(error.map { String(describing: $0.context) } ?? "")"
            #expect(text.contains(member) && !text.contains("owned-title") && !text.contains("\u{1B}") && !text.contains("caf"), "\(text)")
        }
        // Every printable ASCII character, the space included, is a VSCHAR.
        let printable = String(String.UnicodeScalarView((0x20...0x7E).compactMap(Unicode.Scalar.init)))
        var object: [String: String] = ["access_token": "a", "token_type": "Bearer"]
        object[member] = printable
        let set = try TokenSet(tokenAnswer: Array(try JSONSerialization.data(withJSONObject: object)), requestedScopes: [], receivedAt: now)
        #expect([set.accessToken, set.refreshToken, set.idToken].contains(Secret(printable)))
    }

    @Test("a provider whose refresh answer carries an escape: refused by the token client, the token in no error")
    func overHTTP() async throws {
        try await withNIOHTTPTransport { transport in
            let body = #"{"access_token":"AT\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUvc2ggfCBzaAo=\u0007","token_type":"Bearer","expires_in":60}"#
            try await withRawHTTPServer({ _ in .bytes(RawHTTPServer.response(status: 200, [("Content-Type", "application/json")], body: Array(body.utf8))) }) { server in
                var provider = ProviderConfiguration(issuer: "http://127.0.0.1", authorizationEndpoint: server.url("/a"))
                provider.tokenEndpoint = server.url("/token")
                let client = TokenClient(provider: provider, clientID: "c", transport: transport)
                let error = await #expect(throws: OIDCError.self) { try await client.refresh(Secret("rt")) }
                #expect(error?.code == .malformedResponse)
                #expect(error?.description.contains("Y3VybCBldmls") == false)
            }
        }
    }
}
