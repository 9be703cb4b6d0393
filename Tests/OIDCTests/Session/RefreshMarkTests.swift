import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A store whose lock can be lost (as a database's can), in front of a real one: the session marks
/// its refreshes in flight in it. Saves can be made to fail, or to commit and still report a failure
/// (a connection that broke after the server committed).
actor LosableLockStore: TokenStore {
    enum SaveOutcome { case fail, commitThenFail }
    let inner: InMemoryTokenStore
    private var outcomes: [SaveOutcome] = []
    init(_ inner: InMemoryTokenStore) { self.inner = inner }
    nonisolated var lockCanBeLost: Bool { true }
    /// The next saves end like this, in turn; the ones after them succeed.
    func script(_ outcomes: [SaveOutcome]) { self.outcomes = outcomes }
    func load(_ key: TokenStoreKey) async throws -> StoredLogin? { await inner.load(key) }
    func save(_ login: StoredLogin, for key: TokenStoreKey) async throws {
        let outcome = outcomes.isEmpty ? nil : outcomes.removeFirst()
        if outcome == .fail { throw OIDCError(.storageFailure, "The lock was lost.") }
        await inner.save(login, for: key)
        if outcome == .commitThenFail { throw OIDCError(.storageFailure, "The connection broke after the commit.") }
    }
    func delete(_ key: TokenStoreKey) async throws { await inner.delete(key) }
    func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        try await inner.withLock(key, body)
    }
}

@Suite("Authenticated session: refreshes marked in flight, for stores whose lock can be lost", .timeLimit(.scaledMinutes(1)))
struct RefreshMarkTests {
    typealias Outer = AuthenticatedSessionTests

    static func session(
        _ fixture: Outer.Fixture, _ store: any TokenStore, wait: Duration = .seconds(10), now: @escaping @Sendable () -> Date = { Date() }
    ) -> AuthenticatedSession {
        fixture.session(store: store, options: AuthenticatedSession.Options(inFlightRefreshWait: wait), now: now)
    }

    /// Puts another instance's mark, begun at `began`, on the stored login.
    static func mark(_ fixture: Outer.Fixture, began: Date) async throws {
        var login = try #require(await fixture.store.load(Outer.key))
        login.refreshMark = RefreshMark(id: "another-instance", began: began)
        await fixture.store.save(login, for: Outer.key)
    }

    @Test("a refresh that fails for a transient reason removes its mark: another instance refreshes at once, without waiting")
    func transientFailureRemovesTheMark() async throws {
        try await Outer.withFixture { fixture in
            let store = LosableLockStore(fixture.store)
            try await fixture.logIn(expired: true)
            await fixture.provider.failNextTokenRequests(1, with: .serviceUnavailable)
            let first = Self.session(fixture, store)
            let error = await #expect(throws: OIDCError.self) { try await first.validTokens() }
            #expect(error?.code != .notLoggedIn)
            #expect(await fixture.store.load(Outer.key)?.refreshMark == nil)

            let other = Self.session(fixture, store, wait: .scaled(.seconds(30)))
            let started = ContinuousClock.now
            _ = try await other.validTokens()
            #expect(ContinuousClock.now - started < .scaled(.seconds(10)))  // not the (scaled) 30 s wait
            #expect(await fixture.provider.requestCount(.token) == 2)
            #expect(await fixture.store.load(Outer.key)?.refreshMark == nil)
        }
    }

    @Test("a mark save that committed but reported a failure: the session does not wait for its own mark")
    func ownMarkIsNeverWaitedFor() async throws {
        try await Outer.withFixture { fixture in
            let store = LosableLockStore(fixture.store)
            try await fixture.logIn(expired: true)
            let session = Self.session(fixture, store, wait: .scaled(.seconds(30)))
            // The mark's save commits but reports a failure, and taking it back fails too.
            await store.script([.commitThenFail, .fail])
            let error = await #expect(throws: OIDCError.self) { try await session.validTokens() }
            #expect(error?.code == .storageFailure)
            #expect(await fixture.store.load(Outer.key)?.refreshMark != nil)  // committed, left behind
            #expect(await fixture.provider.requestCount(.token) == 0)  // the token was not sent

            let started = ContinuousClock.now
            let tokens = try await session.validTokens()
            #expect(ContinuousClock.now - started < .scaled(.seconds(10)))  // not the (scaled) 30 s wait
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
            let stored = try #require(await fixture.store.load(Outer.key))
            #expect(stored.tokens.accessToken == tokens.accessToken && stored.refreshMark == nil)
        }
    }

    @Test("a mark dated an hour ahead (a clock far off) counts for one window from when it was first seen, then the session refreshes")
    func futureMarkIsBounded() async throws {
        try await Outer.withFixture { fixture in
            let store = LosableLockStore(fixture.store)
            let clock = TestClock()
            try await fixture.logIn(expired: true)
            try await Self.mark(fixture, began: Date().addingTimeInterval(3600))
            let session = Self.session(fixture, store, wait: .zero, now: { clock.now })

            let error = try await #require(throws: OIDCError.self) { try await session.validTokens() }
            #expect(error.code == .temporarilyUnavailable, "\(error)")
            let retryAfter = try #require(error.context["retryAfter"].flatMap { Int($0) })
            #expect((1...150).contains(retryAfter), "\(retryAfter)")  // never more than one window
            #expect(await fixture.provider.requestCount(.token) == 0)

            clock.advance(by: 100)
            await #expect(throws: OIDCError.self) { try await session.validTokens() }  // still within the window
            clock.advance(by: 51)
            _ = try await session.validTokens()
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
            #expect(await fixture.store.load(Outer.key)?.refreshMark == nil)
        }
    }

    @Test("a mark save that committed but reported a failure is taken back: other instances do not wait for a refresh never sent")
    func committedMarkIsTakenBack() async throws {
        try await Outer.withFixture { fixture in
            let store = LosableLockStore(fixture.store)
            try await fixture.logIn(expired: true)
            let session = Self.session(fixture, store)
            await store.script([.commitThenFail])
            await #expect(throws: OIDCError.self) { try await session.validTokens() }
            #expect(await fixture.store.load(Outer.key)?.refreshMark == nil)
            #expect(await fixture.provider.requestCount(.token) == 0)
        }
    }

    @Test("a mark dated ahead is dated now in the store: a new session (a new request) does not wait for the clock gap either")
    func futureMarkIsRedated() async throws {
        try await Outer.withFixture { fixture in
            let store = LosableLockStore(fixture.store)
            try await fixture.logIn(expired: true)
            try await Self.mark(fixture, began: Date().addingTimeInterval(3600))
            let first = Self.session(fixture, store, wait: .zero)
            await #expect(throws: OIDCError.self) { try await first.validTokens() }
            let stored = try #require(await fixture.store.load(Outer.key)?.refreshMark)
            #expect(stored.id == "another-instance")  // the same mark
            let began = stored.began
            #expect(abs(began.timeIntervalSinceNow) < 30, "\(began)")  // dated now, not an hour ahead

            let clock = TestClock()
            clock.advance(by: 151)
            let later = Self.session(fixture, store, now: { clock.now })  // a new session, after one window
            _ = try await later.validTokens()
            #expect(await fixture.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("the login in session.login never shows a mark; the refreshed login is saved without one")
    func markNeverShown() async throws {
        try await Outer.withFixture { fixture in
            let store = LosableLockStore(fixture.store)
            try await fixture.logIn(expired: true)
            try await Self.mark(fixture, began: Date().addingTimeInterval(-1000))  // long dead
            let session = Self.session(fixture, store)
            #expect(try await session.login?.refreshMark == nil)
            _ = try await session.validTokens()
            #expect(try await session.login?.refreshMark == nil)
            #expect(await fixture.store.load(Outer.key)?.refreshMark == nil)
        }
    }

    @Test("refreshed twice while the store refuses saves: the last tokens are saved over the login the first replaced, nobody is logged out")
    func refusedTwice() async throws {
        try await Outer.withFixture { fixture in
            let inner = fixture.store
            let store = FlakyStore(inner)
            let original = try await fixture.logIn(expired: true)
            let session = fixture.session(store: store)
            await store.failSaves(1_000)
            _ = try await session.validTokens()  // X → Y, refused
            let latest = try await session.validTokens(forceRefresh: true)  // Y → Z, refused again
            #expect(await fixture.provider.grantCount("refresh_token") == 2)
            #expect(await inner.load(Outer.key)?.tokens.refreshToken == original.tokens.refreshToken)

            await store.failSaves(0)
            #expect(try await session.validTokens().accessToken == latest.accessToken)
            #expect(await inner.load(Outer.key)?.tokens.accessToken == latest.accessToken)
            #expect(await session.storageProblem == nil)
            #expect(try await session.send(fixture.resource).status == 200)
            #expect(await fixture.provider.grantCount("refresh_token") == 2)
        }
    }
}
