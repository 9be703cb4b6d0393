import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The authenticated session against ``TestProvider`` over real HTTP: its protected resource
/// (`/api/me`) answers 200 to a valid access token and 401 otherwise.
@Suite("Authenticated session", .timeLimit(.scaledMinutes(1)))
struct AuthenticatedSessionTests {
    static let key = TokenStoreKey(service: "oidc", account: "test-client")

    typealias Fixture = SessionFixture<InMemoryTokenStore>

    static func withFixture(_ configuration: TestProvider.Configuration = .init(), _ body: (Fixture) async throws -> Void) async throws {
        let transport = NIOHTTPTransport()
        defer { Task { try? await transport.shutdown() } }
        try await withTestProvider(configuration) { provider in
            try await body(try await Fixture(provider: provider, transport: transport, store: InMemoryTokenStore(), key: key, clientID: "test-client"))
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
