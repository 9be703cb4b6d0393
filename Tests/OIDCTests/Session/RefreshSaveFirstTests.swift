import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Security review 3, M2: a refresh spends the stored refresh token at the provider; its rotated
/// replacement must reach the store before anything slow happens (the refreshed ID token's check,
/// which may have to fetch the provider's keys), or a process killed meanwhile loses it.
@Suite("Authenticated session: refreshed tokens are saved before the refreshed ID token is checked", .timeLimit(.scaledMinutes(1)))
struct RefreshSaveFirstTests {
    typealias Outer = AuthenticatedSessionTests

    /// Provider keys that say when they are asked for, and answer once released, with a failure (a
    /// host that does not answer in time).
    static func stalledKeys() -> (keys: JWKSCache, asked: AsyncStream<Void>, release: AsyncStream<Void>.Continuation) {
        let (asked, asking) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let keys = JWKSCache {
            asking.yield()
            for await _ in released { break }
            throw OIDCError(.timedOut, "The JWKS host did not answer.")
        }
        return (keys, asked, release)
    }

    @Test("while the provider's keys stall, the store already holds the rotated refresh token; the login's own ID token is kept when they fail")
    func savedBeforeTheKeysAnswer() async throws {
        try await Outer.withFixture { fixture in
            let login = try await fixture.logIn(expired: true)
            let (keys, asked, release) = Self.stalledKeys()
            let session = fixture.session(options: AuthenticatedSession.Options(refreshedIDTokenKeys: keys))
            let refresh = Task { try await session.validTokens() }
            // The session asks for the keys to check the refreshed ID token: the tokens must be saved by then.
            for await _ in asked { break }
            let stored = try #require(await fixture.store.load(Outer.key))
            #expect(stored.tokens.refreshToken != login.tokens.refreshToken, "the rotated refresh token waited for the keys")
            #expect(stored.tokens.idToken == login.tokens.idToken)  // the new ID token is not trusted yet
            #expect(await fixture.provider.grantCount("refresh_token") == 1)

            release.finish()
            let fresh = try await refresh.value
            #expect(fresh.refreshToken == stored.tokens.refreshToken)
            #expect(fresh.idToken == login.tokens.idToken)  // the keys failed: the new ID token was dropped
            #expect(await fixture.store.load(Outer.key)?.tokens == fresh)
        }
    }

    @Test("with keys that answer, the verified ID token is saved too, in a second save")
    func verifiedIDTokenSavedAfter() async throws {
        try await Outer.withFixture { fixture in
            let login = try await fixture.logIn(expired: true)
            let session = fixture.session(options: fixture.keys)
            let fresh = try await session.validTokens()
            #expect(fresh.idToken != login.tokens.idToken)
            #expect(await fixture.store.load(Outer.key)?.tokens == fresh)
        }
    }
}
