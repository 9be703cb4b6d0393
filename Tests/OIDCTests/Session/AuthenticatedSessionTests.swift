import Foundation
import OIDC
import OIDCTesting
import Testing

/// The authenticated session against ``TestProvider`` over real HTTP: its protected resource
/// (`/api/me`) answers 200 to a valid access token and 401 otherwise.
@Suite("Authenticated session", .timeLimit(.minutes(1)))
struct AuthenticatedSessionTests {
    static let key = TokenStoreKey(service: "oidc", account: "test-client")

    struct Fixture {
        let provider: TestProvider
        let transport: NIOHTTPTransport
        let store: InMemoryTokenStore
        let client: TokenClient

        func session(
            store: (any TokenStore)? = nil, source: AuthenticatedSession.TokenSource? = nil, transport: (any HTTPTransport)? = nil,
            options: AuthenticatedSession.Options = AuthenticatedSession.Options(), now: @escaping @Sendable () -> Date = { Date() }
        ) -> AuthenticatedSession {
            AuthenticatedSession(
                store: store ?? self.store, key: AuthenticatedSessionTests.key, source: source ?? .refreshToken(client), transport: transport ?? self.transport,
                allowlist: .default(for: URL(string: provider.issuer)!), options: options, now: now
            )
        }

        /// The provider's keys, for refreshed ID tokens.
        var keys: AuthenticatedSession.Options {
            AuthenticatedSession.Options(refreshedIDTokenKeys: JWKSCache(transport: transport, jwksURI: URL(string: provider.jwksURI)!))
        }

        var resource: HTTPRequest { HTTPRequest(url: URL(string: provider.protectedResourceURL)!) }

        /// Logs the test user in, with the stored access token already expired when `expired`.
        @discardableResult
        /// A session over an expired login whose refresh the store refused to save: the refreshed
        /// tokens wait in memory to be saved again.
        func sessionWithRefusedRefresh() async throws -> (session: AuthenticatedSession, refused: TokenSet) {
            let store = FlakyStore(self.store)
            try await logIn(expired: true)
            let session = session(store: store)
            await store.failSaves(1)
            return (session, try await session.validTokens())
        }

        @discardableResult
        func logIn(expired: Bool = false) async throws -> StoredLogin {
            var tokens = try await provider.issueTokens()
            if expired { tokens.expiresAt = Date().addingTimeInterval(-10) }
            return try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", key: AuthenticatedSessionTests.key)
        }
    }

    static func withFixture(_ configuration: TestProvider.Configuration = .init(), _ body: (Fixture) async throws -> Void) async throws {
        let transport = NIOHTTPTransport()
        defer { Task { try? await transport.shutdown() } }
        try await withTestProvider(configuration) { provider in
            let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
            let client = TokenClient(provider: try metadata.configuration(), clientID: "test-client", transport: transport)
            try await body(Fixture(provider: provider, transport: transport, store: InMemoryTokenStore(), client: client))
        }
    }

    @Test("401 → exactly one refresh → the retried request succeeds with the new token, which is in the store")
    func refreshOn401() async throws {
        try await Self.withFixture { fixture in
            let before = try await fixture.logIn()
            await fixture.provider.expireAccessTokens()
            let session = fixture.session()
            let response = try await session.send(fixture.resource)
            #expect(response.status == 200)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
            #expect(await fixture.provider.requestCount(.protectedResource) == 2)
            let stored = try #require(await fixture.store.load(Self.key))
            #expect(stored.tokens.accessToken != before.tokens.accessToken)
            #expect(stored.tokens.refreshToken != before.tokens.refreshToken)  // rotated, and kept
        }
    }

    @Test("100 concurrent requests with an expired access token share exactly one refresh")
    func concurrentRefresh() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn(expired: true)
            let session = fixture.session()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 { group.addTask { try await session.send(fixture.resource).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 100 && statuses.allSatisfy { $0 == 200 })
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("100 concurrent requests that all get a 401 share one refresh too")
    func concurrent401() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn()
            await fixture.provider.expireAccessTokens()
            let session = fixture.session()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 { group.addTask { try await session.send(fixture.resource).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("a resource that always answers 401: one refresh, one retry, then an error; no loop")
    func always401() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn()
            await fixture.provider.failNextRequests(10, to: .protectedResource, with: .oauthError("invalid_token", status: 401))
            let error = await #expect(throws: OIDCError.self) { try await fixture.session().send(fixture.resource) }
            #expect(error?.code == .unauthorized)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
            #expect(await fixture.provider.requestCount(.protectedResource) == 2)
            #expect(await fixture.store.load(Self.key) != nil)  // a stubborn resource logs nobody out
        }
    }

    @Test("a refresh answered invalid_grant logs the user out: entry gone, event and delegate told")
    func invalidGrantLogsOut() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn(expired: true)
            let session = fixture.session()
            let delegate = Delegate()
            await session.setDelegate(delegate)
            await fixture.provider.failNextTokenRequests(1, with: .invalidGrant)
            let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(error?.providerError?.error == "invalid_grant")
            #expect(error?.category == .provider)
            #expect(await fixture.store.load(Self.key) == nil)
            var events = session.events.makeAsyncIterator()
            let event = await events.next()
            #expect(event == .loggedOut(.refreshRejected(.init(error: "invalid_grant", errorDescription: nil))) || {
                if case .loggedOut(.refreshRejected) = event { return true } else { return false }
            }())
            #expect(delegate.reasons.count == 1)
            let after = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(after?.code == .notLoggedIn)
            #expect(await fixture.provider.requestCount(.protectedResource) == 0)
        }
    }

    @Test("a refresh answered 503 keeps the user logged in with a retryable error; the next call refreshes again")
    func transientKeepsLogin() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn(expired: true)
            let session = fixture.session()
            await fixture.provider.failNextTokenRequests(1, with: .serviceUnavailable)
            let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(error?.category == .transient)
            #expect(await fixture.store.load(Self.key) != nil)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await fixture.provider.grantCount("refresh_token") == 2)
        }
    }

    @Test("a host off the allowlist, or plain http off loopback, is refused before anything is sent")
    func allowlist() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn()
            let recorder = RecordingTransport(fixture.transport)
            let session = fixture.session(transport: recorder)
            for url in ["https://evil.example/api/me", "http://api.example/me", "https://127.0.0.1.evil.example/x", "ftp://127.0.0.1/x"] {
                let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: URL(string: url)!)) }
                #expect(error?.code == .hostNotAllowed, "\(url)")
                #expect(error?.category == .transport)
            }
            #expect(await recorder.requests.isEmpty)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await recorder.requests.first?.headers["Authorization"]?.hasPrefix("Bearer ") == true)
        }
    }

    @Test("allowlist matching: the host and its subdomains by default; an explicit list replaces it")
    func allowlistRules() {
        let byDefault = HostAllowlist.default(for: URL(string: "https://api.example.com/v1")!)
        #expect(byDefault.allows(URL(string: "https://api.example.com/x")!))
        #expect(byDefault.allows(URL(string: "https://eu.api.example.com/x")!))
        #expect(byDefault.allows(URL(string: "https://API.EXAMPLE.COM./x")!))
        #expect(!byDefault.allows(URL(string: "https://example.com/x")!))
        #expect(!byDefault.allows(URL(string: "https://evilapi.example.com/x")!))
        #expect(!byDefault.allows(URL(string: "https://api.example.com.evil/x")!))
        #expect(!byDefault.allows(URL(string: "http://api.example.com/x")!))
        let explicit = HostAllowlist([.init("example.com", includesSubdomains: false), .init("cdn.example.net")])
        #expect(explicit.allows(URL(string: "https://example.com/x")!))
        #expect(!explicit.allows(URL(string: "https://api.example.com/x")!))
        #expect(explicit.allows(URL(string: "https://a.cdn.example.net/x")!))
        #expect(HostAllowlist([.init("localhost")]).allows(URL(string: "http://localhost:8080/x")!))
    }

    @Test("a short-lived token is used for half its life, not refreshed on every call")
    func shortLived() async throws {
        try await Self.withFixture { fixture in
            var tokens = try await fixture.provider.issueTokens()
            tokens.receivedAt = Date()
            tokens.expiresAt = Date().addingTimeInterval(30)  // lives 30 s: margin min(60, 15)
            try await fixture.store.inject(tokens, issuer: fixture.provider.issuer, clientID: "test-client", key: Self.key)
            let session = fixture.session()
            for _ in 0..<3 { #expect(try await session.send(fixture.resource).status == 200) }
            #expect(await fixture.provider.grantCount("refresh_token") == 0)
        }
    }

    @Test("a token about to expire is refreshed before the request, not after a 401")
    func proactive() async throws {
        try await Self.withFixture { fixture in
            var tokens = try await fixture.provider.issueTokens()
            tokens.receivedAt = Date().addingTimeInterval(-3570)
            tokens.expiresAt = Date().addingTimeInterval(30)  // an hour-long token inside the 60 s margin
            try await fixture.store.inject(tokens, issuer: fixture.provider.issuer, clientID: "test-client", key: Self.key)
            #expect(try await fixture.session().send(fixture.resource).status == 200)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
            #expect(await fixture.provider.requestCount(.protectedResource) == 1)
        }
    }

    @Test("tokens another session already rotated are adopted from the store, not refreshed again")
    func adoptsRotatedTokens() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn(expired: true)
            let first = fixture.session(), second = fixture.session()
            _ = try await first.login  // holds the expired tokens in memory
            let rotated = try await second.validTokens()
            let adopted = try await first.validTokens()
            #expect(adopted.accessToken == rotated.accessToken)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("resume: nil without a stored login, a working session with one; logout revokes and forgets")
    func resumeAndLogout() async throws {
        try await Self.withFixture { fixture in
            let none = try await AuthenticatedSession.resumeLastLoggedInUser(
                store: fixture.store, key: Self.key, source: .refreshToken(fixture.client), transport: fixture.transport,
                allowlist: .default(for: URL(string: fixture.provider.issuer)!)
            )
            #expect(none == nil)
            try await fixture.logIn()
            let session = try #require(try await AuthenticatedSession.resumeLastLoggedInUser(
                store: fixture.store, key: Self.key, source: .refreshToken(fixture.client), transport: fixture.transport,
                allowlist: .default(for: URL(string: fixture.provider.issuer)!)
            ))
            #expect(try await session.send(fixture.resource).status == 200)
            try await session.logout()
            #expect(await fixture.provider.requestCount(.revocation) == 1)
            #expect(await fixture.store.load(Self.key) == nil)
            var events = session.events.makeAsyncIterator()
            #expect(await events.next() == .loggedOut(.userInitiated))
        }
    }

    @Test("a host token provider: token, temporarily unavailable (no calls until the delay passed), unauthenticated (no calls until refreshNow())")
    func hostProvider() async throws {
        try await Self.withFixture { fixture in
            let host = HostTokens(fixture.provider)
            let clock = TestClock()
            let session = fixture.session(
                source: .host { await host.next() }, options: AuthenticatedSession.Options(temporarilyUnavailableDelay: .seconds(60)), now: { clock.now }
            )

            await host.answer(.token)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await host.calls == 1)

            // The token expires; the host is unavailable: one call, then none until the delay has passed.
            clock.advance(by: 7200)
            await host.answer(.unavailable)
            for _ in 0..<3 {
                let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
                #expect(error?.code == .temporarilyUnavailable)
                #expect(error?.category == .transient)
            }
            #expect(await host.calls == 2)
            clock.advance(by: 61)
            await host.answer(.token)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await host.calls == 3)

            // Unauthenticated: cleared, and no more questions until refreshNow().
            clock.advance(by: 7200)
            await host.answer(.unauthenticated)
            let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(error?.code == .notLoggedIn)
            #expect(await fixture.store.load(Self.key) == nil)
            _ = try? await session.send(fixture.resource)
            #expect(await host.calls == 4)
            await host.answer(.token)
            _ = try await session.refreshNow()
            #expect(await host.calls == 5)
            #expect(try await session.send(fixture.resource).status == 200)
        }
    }
}

extension AuthenticatedSessionTests {
    @Test("logout revokes the refresh token the store holds now, not a spent one this session read earlier")
    func logoutRevokesTheLiveToken() async throws {
        try await Self.withFixture { fixture in
            try await fixture.logIn()
            let a = fixture.session()
            let b = fixture.session()
            let first = try await a.validTokens()  // A has read RT1
            let rotated = try await b.validTokens(forceRefresh: true)  // B rotates RT1 → RT2
            #expect(rotated.refreshToken != first.refreshToken)
            try await a.logout()
            #expect(await fixture.store.load(Self.key) == nil)
            // RT2 was revoked: it no longer refreshes, and its access token no longer opens the API.
            await #expect(throws: OIDCError.self) { try await fixture.client.refresh(try #require(rotated.refreshToken)) }
            let response = try await fixture.transport.send(
                HTTPRequest(url: URL(string: fixture.provider.protectedResourceURL)!, headers: ["Authorization": "Bearer \(rotated.accessToken.revealedValue)"])
            )
            #expect(response.status == 401)
        }
    }

    /// Through the deprecated setter, which took seconds: it still works, and still cannot trap.
    @Test("a delay that is not a finite number does not trap: the default 60 s is used", arguments: [Double.infinity, -Double.infinity, Double.nan, 1e300])
    @available(*, deprecated, message: "tests the deprecated setter")
    func nonFiniteDelay(delay: Double) async throws {
        try await Self.withFixture { fixture in
            let host = HostTokens(fixture.provider)
            let clock = TestClock()
            let session = fixture.session(source: .host { await host.next() }, now: { clock.now })
            await session.setTemporarilyUnavailableDelay(delay)
            await host.answer(.unavailable)
            let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(error?.code == .temporarilyUnavailable)
            let retryAfter = try #require(error?.context["retryAfter"].flatMap { Int($0) })
            #expect(retryAfter == (delay == 1e300 ? 86_400 : 60))
        }
    }
}

final class Delegate: AuthenticatedSessionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [LogoutReason] = []
    var reasons: [LogoutReason] { lock.withLock { received } }
    func userDidLogout(reason: LogoutReason) { lock.withLock { received.append(reason) } }
}

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    var now: Date { lock.withLock { Date().addingTimeInterval(offset) } }
    func advance(by seconds: TimeInterval) { lock.withLock { offset += seconds } }
}

/// A host application's token provider, answering what the test says, with real provider tokens.
actor HostTokens {
    enum Answer { case token, unavailable, unauthenticated }
    let provider: TestProvider
    private var nextAnswer = Answer.token
    private(set) var calls = 0

    init(_ provider: TestProvider) { self.provider = provider }

    func answer(_ answer: Answer) { nextAnswer = answer }

    func next() async -> TokenProviderOutcome {
        calls += 1
        switch nextAnswer {
        case .token:
            guard let tokens = try? await provider.issueTokens() else { return .temporarilyUnavailable(retryAfter: nil) }
            return .token(tokens)
        case .unavailable: return .temporarilyUnavailable(retryAfter: nil)
        case .unauthenticated: return .unauthenticated
        }
    }
}

@Suite("Authenticated session: who gets logged out, and who does not", .timeLimit(.minutes(1)))
struct SessionLogoutRulesTests {
    typealias Outer = AuthenticatedSessionTests

    @Test("a refresh answer that is not an OAuth rejection keeps the user logged in", arguments: [
        TestProvider.Fault.htmlError(status: 400), .htmlError(status: 403), .truncatedJSON, .oversizedBody(byteCount: 2 << 20),
        .problemJSON(status: 400), .dropConnection, .oauthError("server_error", status: 500),
        // The request was wrong, not the login (and an intermediary can forge these): nobody is logged out.
        .oauthError("invalid_request", status: 400), .oauthError("invalid_scope", status: 400),
        .oauthError("unsupported_grant_type", status: 400), .oauthError("unauthorized_client", status: 400),
    ])
    func keepsLogin(fault: TestProvider.Fault) async throws {
        try await Outer.withFixture { fixture in
            try await fixture.logIn(expired: true)
            let session = fixture.session()
            await fixture.provider.failNextTokenRequests(1, with: fault)
            await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(await fixture.store.load(Outer.key) != nil)
            #expect(try await session.send(fixture.resource).status == 200)  // and the next call works
        }
    }

    @Test("invalid_client says the client's configuration is wrong, not the login: the login is kept, and works once the client is right")
    func invalidClient() async throws {
        try await Outer.withFixture { fixture in
            try await fixture.logIn(expired: true)
            await fixture.provider.failNextTokenRequests(1, with: .oauthError("invalid_client", status: 401))
            let session = fixture.session()
            let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(error?.providerError?.error == "invalid_client")
            #expect(error?.endsLogin == false)
            #expect(await fixture.store.load(Outer.key) != nil)
            #expect(try await session.send(fixture.resource).status == 200)  // the same refresh token, accepted now
        }
    }

    @Test("a login without a refresh token is used while valid and kept after a 401")
    func noRefreshToken() async throws {
        try await Outer.withFixture { fixture in
            var tokens = try await fixture.provider.issueTokens()
            tokens.refreshToken = nil
            try await fixture.store.inject(tokens, issuer: fixture.provider.issuer, clientID: "test-client", key: Outer.key)
            let session = fixture.session()
            #expect(try await session.send(fixture.resource).status == 200)
            await fixture.provider.expireAccessTokens()
            let error = await #expect(throws: OIDCError.self) { try await session.send(fixture.resource) }
            #expect(error?.code == .notLoggedIn)
            #expect(await fixture.store.load(Outer.key) != nil)
            #expect(await fixture.provider.grantCount("refresh_token") == 0)
        }
    }

    @Test("a store that cannot save after a refresh: the new tokens are used, the problem reported, and saved later")
    func saveFailure() async throws {
        try await Outer.withFixture { fixture in
            let store = FlakyStore(fixture.store)
            try await fixture.logIn(expired: true)
            let session = fixture.session(store: store)
            await store.failSaves(1)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await session.storageProblem?.code == .storageFailure)
            let live = try await session.validTokens()
            #expect(await fixture.store.load(Outer.key)?.tokens.accessToken == live.accessToken)  // saved on the next call
            #expect(await session.storageProblem == nil)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("tokens the store refused are not saved over a login that replaced theirs meanwhile: the session uses the store's")
    func refusedTokensDoNotOverwriteANewLogin() async throws {
        try await Outer.withFixture { fixture in
            let (session, refused) = try await fixture.sessionWithRefusedRefresh()
            #expect(await session.storageProblem?.code == .storageFailure)

            // Another process logs in anew before the refused tokens are saved again.
            let newer = try await fixture.logIn()
            #expect(try await session.validTokens().accessToken == newer.tokens.accessToken)
            #expect(await fixture.store.load(Outer.key) == newer)  // not overwritten by the refused tokens
            #expect(await session.storageProblem == nil)
            #expect(refused.accessToken != newer.tokens.accessToken)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("tokens the store refused are not saved over a login deleted meanwhile (a logout elsewhere): they are revoked, the session is logged out")
    func refusedTokensDoNotResurrectALogin() async throws {
        try await Outer.withFixture { fixture in
            let (session, refused) = try await fixture.sessionWithRefusedRefresh()
            #expect(await fixture.provider.requestCount(.revocation) == 0)

            await fixture.store.delete(Outer.key)  // another process logs out
            let error = await #expect(throws: OIDCError.self) { try await session.validTokens() }
            #expect(error?.code == .notLoggedIn, "\(String(describing: error))")
            #expect(await fixture.store.load(Outer.key) == nil)
            #expect(try await session.login == nil)
            // The refused tokens were revoked rather than left alive after the logout.
            #expect(await fixture.provider.requestCount(.revocation) == 1)
            var request = HTTPRequest(url: fixture.resource.url)
            request.headers.set("Authorization", "Bearer " + refused.accessToken.revealedValue)
            #expect(try await fixture.transport.send(request, options: HTTPRequestOptions()).status == 401)
        }
    }

    @Test("a 401 while the session re-saves tokens the store refused still refreshes, instead of taking the re-saved ones")
    func unauthorizedDuringResave() async throws {
        try await Outer.withFixture { fixture in
            let store = FlakyStore(fixture.store)
            try await fixture.logIn(expired: true)
            let session = fixture.session(store: store)
            await store.failSaves(1)
            #expect(try await session.send(fixture.resource).status == 200)  // refreshed; the store refused them
            await fixture.provider.expireAccessTokens()  // those tokens are now refused by the resource

            await store.holdSaves()
            let resaving = Task { try await session.validTokens() }  // starts saving them again; held
            for _ in 0..<400 where !(await store.isHoldingASave) { try await Task.sleep(for: .milliseconds(5)) }
            let request = Task { try await session.send(fixture.resource) }  // 401, then a refresh while the save runs
            for _ in 0..<400 where await fixture.provider.requestCount(.protectedResource) < 2 { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(200))
            await store.release()

            #expect(try await request.value.status == 200)
            _ = try await resaving.value
            #expect(await fixture.provider.grantCount("refresh_token") == 2)
        }
    }

    @Test("a caller cancelled while the refresh runs stops waiting at once; the refresh goes on, and the next call uses its tokens without another refresh")
    func cancelledWhileRefreshing() async throws {
        try await Outer.withFixture { fixture in
            let login = try await fixture.logIn(expired: true)
            let session = fixture.session()
            await fixture.provider.failNextTokenRequests(1, with: .delay(.seconds(5)))
            let caller = Task { try await session.validTokens() }
            for _ in 0..<1000 where await fixture.provider.requestCount(.token) == 0 { try await Task.sleep(for: .milliseconds(5)) }
            try #require(await fixture.provider.requestCount(.token) == 1, "the refresh never reached the provider")
            let cancelledAt = ContinuousClock.now
            caller.cancel()
            let error = await #expect(throws: OIDCError.self) { try await caller.value }
            #expect(error?.code == .cancelled, "\(String(describing: error))")
            #expect(ContinuousClock.now - cancelledAt < .seconds(2))  // not the provider's 5 s

            let tokens = try await session.validTokens()  // joins the refresh still in flight
            #expect(tokens.accessToken != login.tokens.accessToken)
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
            #expect(await fixture.store.load(Outer.key)?.tokens.accessToken == tokens.accessToken)
        }
    }

    @Test("logging out while a refresh is in flight: the refresh does not bring the login back")
    func logoutDuringRefresh() async throws {
        try await Outer.withFixture { fixture in
            try await fixture.logIn(expired: true)
            let session = fixture.session()
            await fixture.provider.failNextTokenRequests(1, with: .delay(.milliseconds(500)))
            let request = Task { try? await session.send(fixture.resource) }
            for _ in 0..<200 where await fixture.provider.grantCount("refresh_token") == 0 { try await Task.sleep(for: .milliseconds(5)) }
            try await session.logout(revoke: false)
            _ = await request.value
            #expect(await fixture.store.load(Outer.key) == nil)
            #expect(try await session.login == nil)
        }
    }

    @Test("allowlist: encoded or odd hosts never match", arguments: [
        "https://evil.com%00.api.example.com/x", "https://good.example.com@evil.example/x", "https://api.example.com%2F@evil.example/x",
        "https://.api.example.com/x", "https://api..example.com/x",
    ])
    func oddHosts(url: String) {
        let allowlist = HostAllowlist.default(for: URL(string: "https://api.example.com")!)
        if let url = URL(string: url) { #expect(!allowlist.allows(url)) }
    }
}

/// A store whose saves fail when told to, in front of a real one.
actor FlakyStore: TokenStore {
    let inner: InMemoryTokenStore
    private var failures = 0
    private var holding = false
    private var held: CheckedContinuation<Void, Never>?
    init(_ inner: InMemoryTokenStore) { self.inner = inner }
    func failSaves(_ count: Int) { failures = count }
    /// The next save waits until ``release()``.
    func holdSaves() { holding = true }
    var isHoldingASave: Bool { held != nil }
    func release() {
        holding = false
        held?.resume()
        held = nil
    }
    func load(_ key: TokenStoreKey) async throws -> StoredLogin? { await inner.load(key) }
    func save(_ login: StoredLogin, for key: TokenStoreKey) async throws {
        if holding { await withCheckedContinuation { held = $0 } }
        if failures > 0 {
            failures -= 1
            throw OIDCError(.storageFailure, "The disk is full.")
        }
        await inner.save(login, for: key)
    }
    func delete(_ key: TokenStoreKey) async throws { await inner.delete(key) }
    func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        try await inner.withLock(key, body)
    }
}

@Suite("Authenticated session: refreshed ID tokens", .timeLimit(.minutes(1)))
struct RefreshedIDTokenTests {
    typealias Outer = AuthenticatedSessionTests

    @Test("with the provider's keys a refreshed ID token is verified and kept; without them the login's own is kept")
    func verified() async throws {
        try await Outer.withFixture { fixture in
            let login = try await fixture.logIn(expired: true)
            let unchecked = fixture.session()
            let kept = try await unchecked.validTokens()
            #expect(kept.idToken == login.tokens.idToken)

            try await fixture.logIn(expired: true)
            let checked = fixture.session(options: fixture.keys)
            let fresh = try await checked.validTokens()
            #expect(fresh.idToken != nil && fresh.idToken != login.tokens.idToken)
        }
    }

    @Test("a refreshed ID token is dropped when the stored login names no subject, or when its auth_time is not the original's")
    func unknownSubjectOrAuthTime() async throws {
        try await Outer.withFixture { fixture in
            let keys = fixture.keys
            var tokens = try await fixture.provider.issueTokens()
            tokens.expiresAt = Date().addingTimeInterval(-10)
            // No subject: the refreshed ID token cannot be tied to anyone.
            await fixture.store.save(StoredLogin(tokens: tokens, issuer: fixture.provider.issuer, clientID: "test-client"), for: Outer.key)
            let session = fixture.session(options: keys)
            let refreshed = try await session.validTokens()
            #expect(refreshed.idToken == tokens.idToken)
            // The rotated tokens are kept (saved) first, then the ID token is checked (security review 3, M2).
            var events = session.events.makeAsyncIterator()
            #expect(await events.next() == .tokensRefreshed)
            var rejected = false
            if case .refreshedIDTokenRejected(let error)? = await events.next() { rejected = error.context["claim"] == "sub" }
            #expect(rejected)

            // The stored ID token says the user authenticated at another time than the provider's records.
            var again = try await fixture.provider.issueTokens()
            again.expiresAt = Date().addingTimeInterval(-10)
            let stamped = try TestSigningKey.generate(.es256).sign(claims: ["sub": "test-user", "auth_time": 1000])
            let original = again.idToken
            again.idToken = Secret(stamped)
            await fixture.store.save(
                StoredLogin(tokens: again, issuer: fixture.provider.issuer, clientID: "test-client", subject: "test-user"), for: Outer.key
            )
            let second = fixture.session(options: keys)
            let renewed = try await second.validTokens()
            #expect(renewed.idToken == Secret(stamped))
            #expect(original != nil)
            var secondEvents = second.events.makeAsyncIterator()
            #expect(await secondEvents.next() == .tokensRefreshed)
            var authTimeRejected = false
            if case .refreshedIDTokenRejected(let error)? = await secondEvents.next() { authTimeRejected = error.context["claim"] == "auth_time" }
            #expect(authTimeRejected)
        }
    }

    @Test("a refreshed ID token about another user is dropped, reported, and the login's own kept")
    func otherUser() async throws {
        try await Outer.withFixture { fixture in
            // The stored login says it belongs to someone else than the provider's user.
            var tokens = try await fixture.provider.issueTokens()
            tokens.expiresAt = Date().addingTimeInterval(-10)
            let login = try await fixture.store.inject(
                tokens, issuer: fixture.provider.issuer, clientID: "test-client", subject: "someone-else", key: Outer.key
            )
            let session = fixture.session(options: fixture.keys)
            let refreshed = try await session.validTokens()
            #expect(refreshed.idToken == login.tokens.idToken)
            #expect(refreshed.accessToken != login.tokens.accessToken)
            // The rotated tokens are kept (saved) first, then the ID token is checked (security review 3, M2).
            var events = session.events.makeAsyncIterator()
            #expect(await events.next() == .tokensRefreshed)
            var rejected = false
            if case .refreshedIDTokenRejected(let error)? = await events.next() { rejected = error.context["claim"] == "sub" }
            #expect(rejected)
        }
    }
}
