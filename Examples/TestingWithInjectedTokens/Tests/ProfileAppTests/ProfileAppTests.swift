import Foundation
import OIDC
import OIDCTesting
import ProfileApp
import Testing

/// ProfileApp's tests start "already logged in": the provider issues real tokens without a
/// browser and they are injected into the app's store, so no test clicks through a login page.
@Suite("ProfileApp, started logged in through token injection", .timeLimit(.minutes(1)))
struct ProfileAppTests {
    let key = TokenStoreKey(service: "profile-app", account: "test-client")

    /// The app over a store that already holds a login of the provider's user.
    func startLoggedIn(_ provider: TestProvider, _ transport: NIOHTTPTransport) async throws -> (ProfileApp, InMemoryTokenStore) {
        let store = InMemoryTokenStore()
        try await provider.logIn(into: store, key: key)
        let rp = try await provider.relyingParty(transport: transport)
        let app = ProfileApp(session: rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource)), api: provider.protectedResource)
        return (app, store)
    }

    @Test("starts on the profile without any login page")
    func startsOnTheProfile() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let (app, _) = try await startLoggedIn(provider, transport)
                #expect(await app.reload() == .profile(name: "Test User"))
                #expect(await provider.requestCount(.authorize) == 0)
                #expect(await provider.grantCount("refresh_token") == 0)
            }
        }
    }

    @Test("a 401 from the API is answered by one refresh and a retry; the user never notices")
    func refreshesOnUnauthorized() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let (app, store) = try await startLoggedIn(provider, transport)
                let before = try #require(await store.load(key)).tokens
                await provider.expireAccessTokens()  // the API now answers 401 to the stored token

                #expect(await app.reload() == .profile(name: "Test User"))
                #expect(await provider.grantCount("refresh_token") == 1)
                #expect(await provider.requestCount(.protectedResource) == 2)  // the 401, then the retry
                let after = try #require(await store.load(key)).tokens
                #expect(after.accessToken != before.accessToken)
                #expect(after.refreshToken != before.refreshToken)  // rotated, and the new one kept
            }
        }
    }

    @Test("an injected token that has expired is refreshed before the call")
    func refreshesAnExpiredInjectedToken() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let store = InMemoryTokenStore()
                var tokens = try await provider.issueTokens()
                tokens.expiresAt = Date().addingTimeInterval(-10)
                try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", key: key)
                let app = try await ProfileApp.start(
                    issuer: provider.issuer, clientID: "test-client", api: try #require(URL(string: provider.protectedResourceURL)),
                    store: store, key: key, transport: transport
                )
                #expect(await app.reload() == .profile(name: "Test User"))
                #expect(await provider.grantCount("refresh_token") == 1)
                #expect(await provider.requestCount(.protectedResource) == 1)  // no 401 first
            }
        }
    }

    @Test("a refused refresh logs the user out: the login screen, the store emptied, an event")
    func refusedRefreshLogsOut() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let (app, store) = try await startLoggedIn(provider, transport)
                let events = app.session.events
                await provider.expireAccessTokens()
                await provider.failNextTokenRequests(1, with: .invalidGrant)

                #expect(await app.reload() == .login)
                #expect(await store.load(key) == nil)
                var iterator = events.makeAsyncIterator()
                let event = await iterator.next()
                guard case .loggedOut(.refreshRejected(let error)) = event else {
                    Issue.record("expected a logout for the refused refresh, got \(String(describing: event))")
                    return
                }
                #expect(error?.error == "invalid_grant")
            }
        }
    }

    @Test("a provider that is down logs nobody out")
    func outageKeepsTheLogin() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let (app, store) = try await startLoggedIn(provider, transport)
                await provider.expireAccessTokens()
                await provider.failNextTokenRequests(1, with: .serviceUnavailable)

                #expect(await app.reload() == .offline)
                #expect(await store.load(key) != nil)
                #expect(await app.reload() == .profile(name: "Test User"))  // back up: refreshed now
            }
        }
    }

    @Test("log out revokes the refresh token at the provider and forgets the login")
    func logOut() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let (app, store) = try await startLoggedIn(provider, transport)
                let refreshToken = try #require(await store.load(key)?.tokens.refreshToken)
                try await app.logOut()

                #expect(await app.screen == .login)
                #expect(await store.load(key) == nil)
                #expect(await provider.requestCount(.revocation) == 1)
                // The revoked refresh token is dead at the provider too.
                let client = try await provider.relyingParty(transport: transport).tokenClient
                await #expect(throws: OIDCError.self) { _ = try await client.refresh(refreshToken) }
            }
        }
    }
}
