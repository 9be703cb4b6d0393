import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The facade over real loopback HTTP against TestProvider: discovery, the code flow a server runs,
/// keeping a login, and a session over it.
@Suite("Relying party", .timeLimit(.scaledMinutes(1)))
struct RelyingPartyTests {
    static let redirectURI = "http://127.0.0.1:9/callback"
    static let key = TokenStoreKey(service: "rp-tests", account: "alice")

    /// Where the provider sends the browser back for `url` (it signs in at once): the callback URL.
    static func callback(for url: URL, _ transport: any HTTPTransport) async throws -> URL {
        let answer = try await transport.send(HTTPRequest(url: url), options: HTTPRequestOptions(followRedirects: false))
        #expect(answer.status == 302)
        return try #require(answer.headers["Location"].flatMap(URL.init(string:)))
    }

    /// `url` with its query item `name` replaced by `value`.
    static func replacing(_ name: String, with value: String, in url: URL) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.queryItems = components.queryItems?.map { $0.name == name ? URLQueryItem(name: name, value: value) : $0 }
        return try #require(components.url)
    }

    @Test("discover: the discovered endpoints and keys; a confidential client authenticates as the provider allows; logins ask for openid and offline_access")
    func discover() async throws {
        try await withTestProvider { provider in
            let rp = try await RelyingParty.discover(issuer: provider.issuer, clientID: "test-client")
            #expect(rp.provider.issuer == provider.issuer)
            #expect(rp.provider.tokenEndpoint?.absoluteString == provider.tokenEndpoint)
            #expect(rp.provider.revocationEndpoint?.absoluteString == provider.revocationEndpoint)
            #expect(rp.provider.defaultScopes == ["openid", "offline_access"])
            #expect(rp.provider.clientAuthentication == .none)
            #expect(rp.keys != nil)
            #expect(rp.provider.authorizationResponseIssParameterSupported)

            let confidential = try await RelyingParty.discover(issuer: provider.issuer, clientID: "c", clientSecret: Secret("s"))
            #expect(confidential.provider.clientAuthentication == .clientSecretBasic)
            #expect(confidential.tokenClient.clientSecret == Secret("s"))
        }
    }

    @Test("discover with a preset: its client authentication, headers, issuer matching and scopes over the discovered endpoints")
    func discoverWithPreset() async throws {
        try await withTestProvider { provider in
            var preset = ProviderConfiguration(
                issuer: provider.issuer, authorizationEndpoint: URL(string: "https://preset.example/authorize")!,
                tokenEndpoint: URL(string: "https://preset.example/token")!, defaultScopes: ["openid", "offline"],
                clientAuthentication: .clientSecretPost
            )
            preset.tokenRequestHeaders = [OAuthParameter("X-OIDC", "v1")]
            preset.issuerMatching = .ignoringTrailingSlash
            let rp = try await RelyingParty.discover(
                issuer: provider.issuer, clientID: "c", clientSecret: Secret("s"), preset: preset
            )
            #expect(rp.provider.authorizationEndpoint?.absoluteString == provider.authorizationEndpoint)  // discovered
            #expect(rp.provider.tokenEndpoint?.absoluteString == provider.tokenEndpoint)
            #expect(rp.provider.jwksURI?.absoluteString == provider.jwksURI)
            #expect(rp.provider.clientAuthentication == .clientSecretPost)  // the preset's quirks
            #expect(rp.provider.tokenRequestHeaders == [OAuthParameter("X-OIDC", "v1")])
            #expect(rp.provider.issuerMatching == .ignoringTrailingSlash)
            #expect(rp.provider.defaultScopes == ["openid", "offline"])
        }
    }

    @Test("a server's code flow: request, URL, callback, verified login kept under the lock, a session that calls the API and refreshes on a 401")
    func codeFlow() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI, scopes: ["profile"]) { $0.loginHint = "alice" }
            #expect(request.scopes == ["openid", "profile"])  // openid always, first
            let url = try await rp.authorizationURL(for: request)
            #expect(url.absoluteString.hasPrefix(provider.authorizationEndpoint + "?"))
            #expect(url.query?.contains("login_hint=alice") == true)

            let login = try await rp.completeLogin(callback: try await Self.callback(for: url, rp.transport), for: request)
            #expect(login.clientID == "test-client")
            #expect(login.issuer == provider.issuer)
            #expect(login.idToken.claims.nonce == request.nonce)
            #expect(login.provider == rp.provider)

            let store = InMemoryTokenStore()
            let session = try await rp.keep(login, in: store, as: Self.key, allowlist: .default(for: provider.protectedResource))
            let stored = try #require(await store.load(Self.key))
            #expect(stored.subject == login.idToken.claims.subject && stored.provider == rp.provider && stored.clientID == "test-client")
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)

            await provider.expireAccessTokens()
            let later = rp.session(store: store, key: Self.key, allowlist: .default(for: provider.protectedResource))
            #expect(try await later.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            #expect(await provider.grantCount("refresh_token") == 1)
            #expect(try await later.login?.tokens.idToken != stored.tokens.idToken)  // refreshed, verified and kept
        }
    }

    @Test("completeLogin: a wrong state is refused before anything is sent; a provider's error keeps its description; a foreign iss is refused")
    func callbackChecks() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await Self.callback(for: try await rp.authorizationURL(for: request), rp.transport)

            let forged = try Self.replacing("state", with: "not-the-state", in: callback)
            let wrongState = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: forged, for: request) }
            #expect(wrongState?.code == .stateMismatch)
            let mixedUp = try Self.replacing("iss", with: "https://attacker.example", in: callback)
            let wrongIssuer = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: mixedUp, for: request) }
            #expect(wrongIssuer?.code == .issuerMismatch)
            #expect(await provider.grantCount("authorization_code") == 0)  // the code was never sent

            let denied = try #require(URL(string: Self.redirectURI + "?error=access_denied&error_description=Nope&state=\(request.state)&iss=\(provider.issuer)"))
            let refusal = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: denied, for: request) }
            #expect(refusal?.code == .providerError && refusal?.providerError?.errorDescription == "Nope")
            #expect(refusal?.endsLogin == false)
            #expect(await provider.grantCount("authorization_code") == 0)
            _ = try await rp.completeLogin(callback: callback, for: request)  // the real one still works
        }
    }

    @Test("completeLogin: another URL is notOurRedirect, an intermediate one (bankId) says so, a cancel redirect is cancelled")
    func notOurRedirect() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let request = try rp.authorizationRequest(redirectURI: "com.example.app:/oauth/callback")
            for (text, code, kind) in [
                ("com.example.app:/elsewhere?code=x&state=\(request.state)", OIDCError.Code.notOurRedirect, "other"),
                ("com.example.app:/oauth/callback/bankId", .notOurRedirect, "intermediate"),
                ("com.example.app:/oauth/callback/cancel", .cancelled, nil),
            ] {
                let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: URL(string: text)!, for: request) }
                #expect(error?.code == code, "\(text)")
                #expect(error?.context["redirect"] == kind, "\(text)")
            }
        }
    }

    @Test("a provider without jwks_uri: one clear error before the code is spent, and before a loopback login starts")
    func noKeys() async throws {
        try await withTestProvider { provider in
            var configuration = provider.providerConfiguration
            configuration.jwksURI = nil
            let rp = RelyingParty(provider: configuration, clientID: "test-client")
            #expect(rp.keys == nil)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await Self.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: callback, for: request) }
            #expect(error?.code == .missingParameter)
            #expect(error?.message.contains("jwks_uri") == true)
            #expect(await provider.grantCount("authorization_code") == 0)

            var loopback = rp.loopbackLogin()
            loopback.browser = nil
            let early = await #expect(throws: OIDCError.self) { try await loopback.runLogin { _ in Issue.record("started anyway") } }
            #expect(early?.code == .missingParameter)
        }
    }

    @Test("a refused refresh is reported as an ended login: the error says so, the store is empty, the observers are told")
    func refusedRefreshEndsTheLogin() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let store = InMemoryTokenStore()
            var tokens = try await provider.issueTokens()
            tokens.expiresAt = Date().addingTimeInterval(-10)
            tokens.refreshToken = Secret("a-refresh-token-the-provider-never-issued")
            try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", key: Self.key)
            let session = rp.session(store: store, key: Self.key, allowlist: .default(for: provider.protectedResource))
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
            #expect(error?.endsLogin == true)
            #expect(error?.providerError?.error == "invalid_grant")
            guard case .refreshRejected? = error?.endedLogin else { Issue.record("no logout reason: \(String(describing: error))"); return }
            #expect(await store.load(Self.key) == nil)
            var events = session.events.makeAsyncIterator()
            #expect(await events.next() == .loggedOut(.refreshRejected(error?.providerError)))

            let again = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
            #expect(again?.code == .notLoggedIn && again?.endsLogin == true)

            await provider.failNextTokenRequests(1, with: .serviceUnavailable)
            try await provider.logIn(into: store, key: Self.key)
            await provider.expireAccessTokens()
            let transient = await #expect(throws: OIDCError.self) {
                try await rp.session(store: store, key: Self.key, allowlist: .default(for: provider.protectedResource))
                    .send(HTTPRequest(url: provider.protectedResource))
            }
            #expect(transient?.endsLogin == false)  // a 503 ends nothing
            #expect(await store.load(Self.key) != nil)
        }
    }

    @Test("a confidential client from TestProvider.relyingParty(client:) authenticates the registered way")
    func confidentialClient() async throws {
        let client = TestProvider.Client.confidential(id: "server", secret: "s3cret", authentication: .clientSecretPost)
        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            let rp = try await provider.relyingParty(client: client)
            #expect(rp.provider.clientAuthentication == .clientSecretPost)
            let request = try rp.authorizationRequest(redirectURI: "http://127.0.0.1/callback")
            let login = try await rp.completeLogin(callback: try await Self.callback(for: try await rp.authorizationURL(for: request), rp.transport), for: request)
            #expect(login.clientID == "server")
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["client_secret"] == "s3cret" && sent["client_id"] == "server")
        }
    }
}
