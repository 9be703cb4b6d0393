import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing


@Suite("Authenticated session: who gets logged out, and who does not", .timeLimit(.scaledMinutes(1)))
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
            await store.untilHoldingASave()
            let request = Task { try await session.send(fixture.resource) }  // 401, then a refresh while the save runs
            try await fixture.provider.waitForRequests(.protectedResource, count: 2)
            // The 401's answer reaching the session, which then joins the held re-save before it
            // refreshes: no request or store call shows that moment, so this one wait stays.
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
            await fixture.provider.failNextTokenRequests(1, with: .delay(.scaled(.seconds(5))))
            let caller = Task { try await session.validTokens() }
            try await fixture.provider.waitForRequests(.token)
            try #require(await fixture.provider.requestCount(.token) == 1, "the refresh never reached the provider")
            caller.cancel()
            let error = await #expect(throws: OIDCError.self) { try await caller.value }
            #expect(error?.code == .cancelled, "\(String(describing: error))")
            // At once: the caller's wait ended while the provider still held the refresh (nothing saved yet).
            #expect(await fixture.store.load(Outer.key)?.tokens.accessToken == login.tokens.accessToken, "the caller waited for the refresh")

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
            await fixture.provider.failNextTokenRequests(1, with: .delay(.scaled(.milliseconds(500))))
            let request = Task { try? await session.send(fixture.resource) }
            try await fixture.provider.waitForRequests(.token, grantType: "refresh_token")
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
extension SessionFixture<InMemoryTokenStore> {
    /// A session over an expired login whose refresh the store refused to save: the refreshed
    /// tokens wait in memory to be saved again.
    func sessionWithRefusedRefresh() async throws -> (session: AuthenticatedSession, refused: TokenSet) {
        let store = FlakyStore(self.store)
        try await logIn(expired: true)
        let session = session(store: store)
        await store.failSaves(1)
        return (session, try await session.validTokens())
    }
}

actor FlakyStore: TokenStore {
    let inner: InMemoryTokenStore
    private var failures = 0
    private var holding = false
    private var held: CheckedContinuation<Void, Never>?
    private var holdWatchers: [CheckedContinuation<Void, Never>] = []
    init(_ inner: InMemoryTokenStore) { self.inner = inner }
    func failSaves(_ count: Int) { failures = count }
    /// The next save waits until ``release()``.
    func holdSaves() { holding = true }
    var isHoldingASave: Bool { held != nil }
    /// Returns once a save is held (at once if one is).
    func untilHoldingASave() async {
        if held == nil { await withCheckedContinuation { holdWatchers.append($0) } }
    }
    func release() {
        holding = false
        held?.resume()
        held = nil
    }
    func load(_ key: TokenStoreKey) async throws -> StoredLogin? { await inner.load(key) }
    func save(_ login: StoredLogin, for key: TokenStoreKey) async throws {
        if holding {
            await withCheckedContinuation {
                held = $0
                for watcher in holdWatchers { watcher.resume() }
                holdWatchers = []
            }
        }
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
