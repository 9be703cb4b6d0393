import Foundation
import OIDC
import Testing

@Suite("Token sets and the in-memory store")
struct TokenSetAndStoreTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func tokens(refresh: String? = "refresh-1", id: String? = "id-1", expiresIn: TimeInterval? = 3600) -> TokenSet {
        TokenSet(
            accessToken: Secret("access-1"), refreshToken: refresh.map(Secret.init), idToken: id.map(Secret.init),
            expiresAt: expiresIn.map { now.addingTimeInterval($0) }, scopes: ["openid", "offline_access"], receivedAt: now
        )
    }

    @Test("expiry is absolute, with a margin; an unknown expiry never counts as expired")
    func expiry() {
        let set = Self.tokens()
        #expect(!set.isExpired(at: Self.now))
        #expect(!set.isExpired(at: Self.now.addingTimeInterval(3539), margin: 60))
        #expect(set.isExpired(at: Self.now.addingTimeInterval(3540), margin: 60))
        #expect(set.isExpired(at: Self.now.addingTimeInterval(3600)))
        #expect(!Self.tokens(expiresIn: nil).isExpired(at: .distantFuture))
    }

    @Test("a refresh without a refresh token keeps the old one; a rotated one replaces it")
    func refreshMerge() {
        let old = Self.tokens()
        let kept = old.refreshed(with: TokenSet(accessToken: Secret("access-2"), expiresAt: Self.now.addingTimeInterval(7200)))
        #expect(kept.accessToken == Secret("access-2"))
        #expect(kept.refreshToken == Secret("refresh-1"))
        #expect(kept.idToken == Secret("id-1"))
        #expect(kept.scopes == ["openid", "offline_access"])
        let rotated = old.refreshed(with: TokenSet(accessToken: Secret("access-3"), refreshToken: Secret("refresh-2"), scopes: ["openid"]))
        #expect(rotated.refreshToken == Secret("refresh-2"))
        #expect(rotated.scopes == ["openid"])
    }

    @Test("a key made from a secret account holds its SHA-256, never the secret")
    func hashedAccount() throws {
        let key = try TokenStoreKey(service: "backend", hashingAccount: Secret("abc"))
        // SHA-256("abc"), FIPS 180-2 Appendix B.1.
        #expect(key.account == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(!key.description.contains("abc") && key.service == "backend")
    }

    @Test("printing a token set or a stored login shows no token")
    func redaction() {
        let login = StoredLogin(tokens: Self.tokens(), issuer: "https://idp.example", clientID: "c", subject: "u1")
        for text in ["\(Self.tokens())", String(reflecting: Self.tokens()), "\(login)", String(reflecting: login)] {
            #expect(!text.contains("access-1") && !text.contains("refresh-1") && !text.contains("id-1"), "\(text)")
        }
    }

    @Test("a stored login round-trips through its file format")
    func roundTrip() throws {
        let login = StoredLogin(
            tokens: Self.tokens(), issuer: "https://idp.example", clientID: "c", subject: "u1", attributes: ["token_endpoint": "https://idp.example/token"]
        )
        #expect(try StoredLogin(serialized: login.serialized()) == login)
        let bare = StoredLogin(tokens: Self.tokens(refresh: nil, id: nil, expiresIn: nil), issuer: "i", clientID: "c")
        #expect(try StoredLogin(serialized: bare.serialized()) == bare)
    }

    @Test("an unreadable stored login is a corruptStore error that names the path", arguments: [
        "", "{", "[]", #"{"version":1}"#, #"{"version":1,"issuer":"i","client_id":"c","tokens":{}}"#,
        #"{"version":1,"issuer":"i","client_id":"c","tokens":{"access_token":"a","token_type":"Bearer","received_at":1,"expires_at":"soon"}}"#,
        #"{"version":1,"issuer":"i","client_id":"c","tokens":{"access_token":5,"token_type":"Bearer","received_at":1}}"#,
        #"{"version":1,"issuer":"i","client_id":"c","tokens":{"access_token":"a","token_type":"Bearer","received_at":1,"refresh_token":7}}"#,
    ])
    func corrupt(text: String) {
        let error = #expect(throws: OIDCError.self) { try StoredLogin(serialized: Array(text.utf8), path: "/tmp/x.json") }
        #expect(error?.code == .corruptStore)
        #expect(error?.category == .storage)
        #expect(error?.context["path"] == "/tmp/x.json")
    }

    @Test("the in-memory store saves, loads and deletes per key")
    func memoryStore() async throws {
        let store = InMemoryTokenStore()
        let key = TokenStoreKey.schibsted(clientID: "602525f2b41fa31789a95aa8")
        #expect(key.service == "com.schibsted.account")
        #expect(await store.load(key) == nil)
        let login = StoredLogin(tokens: Self.tokens(), issuer: "https://idp.example", clientID: "c")
        await store.save(login, for: key)
        #expect(await store.load(key) == login)
        #expect(await store.load(TokenStoreKey(service: "oidc", account: "other")) == nil)
        await store.delete(key)
        #expect(await store.load(key) == nil)
    }

    @Test("the in-memory lock is exclusive per key and hands over in order")
    func memoryLock() async throws {
        let store = InMemoryTokenStore()
        let key = TokenStoreKey(service: "oidc", account: "a")
        let inside = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await store.withLock(key) {
                        let now = await inside.enter()
                        #expect(now == 1)
                        try await Task.sleep(for: .milliseconds(2))
                        await inside.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await inside.maximum == 1)
        #expect(await inside.entries == 20)
    }

    actor Counter {
        var current = 0, maximum = 0, entries = 0
        func enter() -> Int {
            current += 1
            entries += 1
            maximum = max(maximum, current)
            return current
        }
        func leave() { current -= 1 }
    }
}
