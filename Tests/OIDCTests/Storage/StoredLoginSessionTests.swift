import Foundation
import OIDC
import OIDCTesting
import Testing

@Suite("StoredLogin's session id (sid) and LoginSelector")
struct StoredLoginSessionTests {
    static func login(issuer: String = "https://idp.example", client: String = "c", subject: String? = "u", session: String? = "s") -> StoredLogin {
        var login = StoredLogin(
            tokens: TokenSet(accessToken: Secret("at"), expiresAt: nil, scopes: ["openid"], receivedAt: Date(timeIntervalSince1970: 1_800_000_000)),
            issuer: issuer, clientID: client, subject: subject)
        login.sessionID = session
        return login
    }

    @Test("the session id is written as session_id and reads back; a login without one writes none")
    func roundTrip() throws {
        let login = Self.login()
        let bytes = try login.serialized()
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""session_id":"s""#))
        #expect(try StoredLogin(serialized: bytes) == login)
        let without = Self.login(session: nil)
        #expect(!String(decoding: try without.serialized(), as: UTF8.self).contains("session_id"))
        #expect(try StoredLogin(serialized: try without.serialized()).sessionID == nil)
    }

    @Test("a login stored before session ids were kept loads, with none; a session_id of the wrong type is corrupt")
    func olderLogins() throws {
        let json = #"{"attributes":{},"client_id":"c","issuer":"https://idp.example","subject":"u","tokens":{"access_token":"at","received_at":1799996400,"scope":"openid","token_type":"Bearer"},"version":1}"#
        let login = try StoredLogin(serialized: Array(json.utf8))
        #expect(login.sessionID == nil && login.subject == "u")
        let wrong = json.replacingOccurrences(of: #""subject":"u""#, with: #""subject":"u","session_id":7"#)
        let error = #expect(throws: OIDCError.self) { try StoredLogin(serialized: Array(wrong.utf8)) }
        #expect(error?.code == .corruptStore)
    }

    @Test("a selector matches by issuer and sid, sub, or both, and client when given")
    func selectorMatches() throws {
        let login = Self.login()
        #expect(try LoginSelector(issuer: "https://idp.example", sessionID: "s").matches(login))
        #expect(try LoginSelector(issuer: "https://idp.example", subject: "u").matches(login))
        #expect(try LoginSelector(issuer: "https://idp.example", clientID: "c", subject: "u", sessionID: "s").matches(login))
        #expect(try !LoginSelector(issuer: "https://other.example", sessionID: "s").matches(login))
        #expect(try !LoginSelector(issuer: "https://idp.example", clientID: "d", subject: "u").matches(login))
        #expect(try !LoginSelector(issuer: "https://idp.example", subject: "u", sessionID: "t").matches(login))
        // A login stored without a sid: the subject decides, when the selector has one.
        let old = Self.login(session: nil)
        #expect(try LoginSelector(issuer: "https://idp.example", subject: "u", sessionID: "t").matches(old))
        #expect(try !LoginSelector(issuer: "https://idp.example", sessionID: "t").matches(old))
        #expect(throws: OIDCError.self) { _ = try LoginSelector(issuer: "https://idp.example") }
        #expect(throws: OIDCError.self) { _ = try LoginSelector(issuer: "https://idp.example", sessionID: "") }
    }

    @Test("a login verified from an ID token with sid keeps it (the RelyingParty save path)")
    func fromVerifiedLogin() async throws {
        var user = TestUser.default
        user.extraClaims["sid"] = .string("op-session")
        try await withTestProvider(TestProvider.Configuration(user: user)) { provider in
            let tokens = try await provider.issueTokens(nonce: "n")
            let keys = try JWKSet(json: try await provider.jwksJSON())
            let idToken = try IDTokenVerifier(issuer: provider.issuer, clientID: TestProvider.Client.default.id, nonce: .expected("n"))
                .verify(try #require(tokens.idToken?.revealedValue), keys: keys)
            let verified = VerifiedLogin(
                tokens: tokens, idToken: idToken, clientID: TestProvider.Client.default.id, issuer: provider.issuer,
                provider: ProviderConfiguration(issuer: provider.issuer, authorizationEndpoint: nil))
            #expect(StoredLogin(verified).sessionID == "op-session")
            // Injection reads it too.
            let store = InMemoryTokenStore()
            #expect(try await provider.logIn(into: store).sessionID == "op-session")
        }
    }

    @Test("a store without deleteLogins throws storageFailure marked unsupported")
    func defaultDeleteLogins() async throws {
        struct OldStore: TokenStore {
            func load(_ key: TokenStoreKey) async throws -> StoredLogin? { nil }
            func save(_ login: StoredLogin, for key: TokenStoreKey) async throws {}
            func delete(_ key: TokenStoreKey) async throws {}
            func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T { try await body() }
        }
        let error = await #expect(throws: OIDCError.self) { _ = try await OldStore().deleteLogins(try LoginSelector(issuer: "i", subject: "u")) }
        #expect(error?.code == .storageFailure && error?.context["unsupported"] == "deleteLogins")
        // The conformance suite skips its deleteLogins check for such a store.
        #expect(await TokenStoreConformance.problems([.deleteLogins], makeStore: { OldStore() }).isEmpty)
    }
}
