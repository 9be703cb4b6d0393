import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing


@Suite("Authenticated session: refreshed ID tokens", .timeLimit(.scaledMinutes(1)))
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
