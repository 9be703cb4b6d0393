import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

@Suite("Token injection", .timeLimit(.scaledMinutes(1)))
struct StoreInjectionTests {
    @Test("a test starts logged in: the injected access token works at the protected resource, the refresh token at the token endpoint")
    func logIn() async throws {
        try await withTestProvider { provider in
            let store = InMemoryTokenStore()
            let login = try await provider.logIn(into: store)
            #expect(login.subject == (await provider.user).subject)
            let stored = try #require(await store.load(TokenStoreKey(service: "oidc", account: "test-client")))
            #expect(stored == login)
            #expect(stored.provider?.tokenEndpoint?.absoluteString == provider.tokenEndpoint)

            let me = try await RawHTTPClient.get(
                provider.protectedResourceURL, headers: [.init(name: "Authorization", value: "Bearer \(stored.tokens.accessToken.revealedValue)")]
            )
            #expect(me.status == 200)
            let refreshed = try await RawHTTPClient.postForm(provider.tokenEndpoint, [
                "grant_type": "refresh_token", "refresh_token": try #require(stored.tokens.refreshToken).revealedValue, "client_id": "test-client",
            ])
            #expect(refreshed.status == 200)
            #expect(await provider.grantCount("refresh_token") == 1)

            // The injected ID token verifies against the provider's own keys.
            var verifier = IDTokenVerifier(issuer: provider.issuer, clientID: "test-client", nonce: .absent)
            verifier.accessToken = stored.tokens.accessToken
            let idToken = try verifier.verify(try #require(stored.tokens.idToken).revealedValue, keys: try JWKSet(json: try await provider.jwksJSON()))
            #expect(idToken.claims.subject == stored.subject)
        }
    }

    @Test("hand-made tokens can be injected too, with the subject read from the ID token")
    func handMade() async throws {
        let key = try TestSigningKey.generate(.es256, keyID: "k")
        let idToken = try key.sign(claims: ["iss": "https://idp.example", "sub": "user-42", "aud": "app", "exp": 2_000_000_000, "iat": 1_700_000_000])
        let store = InMemoryTokenStore()
        let login = try await store.inject(
            TokenSet(accessToken: Secret("a"), idToken: Secret(idToken)), issuer: "https://idp.example", clientID: "app",
            key: .schibsted(clientID: "app")
        )
        #expect(login.subject == "user-42")
        #expect(await store.load(.schibsted(clientID: "app"))?.tokens.accessToken == Secret("a"))
    }

    @Test("an unregistered client cannot be logged in")
    func unknownClient() async throws {
        _ = try await withTestProvider { provider in
            await #expect(throws: OIDCError.self) { try await provider.issueTokens(clientID: "nobody") }
        }
    }
}
