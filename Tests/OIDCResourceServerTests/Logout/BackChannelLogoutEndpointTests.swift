import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import OIDCTestSupport
import Testing

@Suite("Back-channel logout endpoint (OIDC Back-Channel Logout 1.0 §2.5, §2.8)")
struct BackChannelLogoutEndpointTests {
    static let form = "application/x-www-form-urlencoded"

    /// Opens the URL in the background, as a system browser does, and signs in on the provider's page.
    struct BackgroundBrowser: BrowserLauncher {
        func open(_ url: URL) async throws(OIDCError) {
            Task { _ = try await TestBrowser().open(url) }
        }
    }

    static func body(_ token: String) -> [UInt8] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return Array(("logout_token=" + token.addingPercentEncoding(withAllowedCharacters: allowed)!).utf8)
    }

    static func json(_ response: BackChannelLogoutEndpoint.Response) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: String] ?? [:]
    }

    @Test("a real code flow keeps the ID token's sid; a logout token for it deletes that login alone, answering 200 no-store")
    func codeFlowThenLogout() async throws {
        var user = TestUser.default
        user.extraClaims["sid"] = .string("op-session-1")
        try await withTestProvider(TestProvider.Configuration(user: user, authorizeBehaviour: .loginPage)) { provider in
            try await withNIOHTTPTransport { transport in
                let configuration = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration()
                let listener = try await LoopbackRedirectListener.start()
                let request = try AuthorizationRequest(
                    provider: configuration, clientID: TestProvider.Client.default.id, redirectURI: listener.redirectURI, scopes: ["openid"])
                try listener.serve(request)
                try await BackgroundBrowser().open(listener.startURL)
                let response = try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(30)))
                let keys = JWKSCache(transport: transport, jwksURI: try #require(configuration.jwksURI))
                let client = TokenClient(provider: configuration, clientID: TestProvider.Client.default.id, transport: transport)
                let verified = try await client.completeLogin(response, for: request, keys: keys)
                let login = StoredLogin(verified)
                #expect(login.sessionID == "op-session-1")

                let store = InMemoryTokenStore()
                let mine = TokenStoreKey(service: "app", account: "alice-laptop")
                await store.save(login, for: mine)
                var otherSession = login
                otherSession.sessionID = "op-session-2"
                let other = TokenStoreKey(service: "app", account: "alice-phone")
                await store.save(otherSession, for: other)

                let verifier = LogoutTokenVerifier(issuer: provider.issuer, clientID: TestProvider.Client.default.id, replayStore: InMemoryReplayStore())
                let endpoint = BackChannelLogoutEndpoint(verifier: verifier, keys: keys)
                let token = try await provider.logoutToken(TestProvider.LogoutTokenContents(for: login))
                let result = await endpoint.handle(contentType: Self.form + "; charset=UTF-8", body: Self.body(token), deletingFrom: store)
                #expect(result.response.status == 200)
                #expect(result.response.headers["Cache-Control"] == "no-store")
                #expect(result.response.body.isEmpty)
                #expect(result.deletedLogins == 1)
                #expect(await store.load(mine) == nil)
                #expect(await store.load(other) == otherSession)

                // The same token again: a replay, 400 with a JSON error naming the rule, never the token.
                let replay = await endpoint.handle(contentType: Self.form, body: Self.body(token), deletingFrom: store)
                #expect(replay.response.status == 400)
                #expect(replay.response.headers["Cache-Control"] == "no-store")
                #expect(replay.response.headers["Content-Type"] == "application/json")
                let error = Self.json(replay.response)
                #expect(error["error"] == "invalid_request")
                #expect(error["error_description"]?.contains("replayed") == true)
                #expect(!String(decoding: replay.response.body, as: UTF8.self).contains(token))
                #expect(replay.deletedLogins == nil)
                #expect(await store.load(other) == otherSession)
            }
        }
    }

    @Test("the form is checked: content type, one logout_token, size, encoding", arguments: [
        ("text/plain", "logout_token=x", LogoutTokenError.Rule.missingToken),
        (nil, "logout_token=x", .missingToken),
        (form, "", .missingToken),
        (form, "token=x", .missingToken),
        (form, "logout_token=", .missingToken),
        (form, "logout_token=a&logout_token=b", .missingToken),
        (form, "logout_token=%ZZ", .missingToken),
        (form, "logout_token=not.a.jws", .malformed),
    ] as [(String?, String, LogoutTokenError.Rule)])
    func formRules(_ contentType: String?, _ body: String, _ rule: LogoutTokenError.Rule) async throws {
        try await LogoutFixture.run { fixture throws in
            let endpoint = BackChannelLogoutEndpoint(verifier: fixture.verifier, keys: fixture.keys)
            let result = await endpoint.handle(contentType: contentType, body: Array(body.utf8))
            guard case .refused(let error) = result.outcome else { Issue.record("accepted \(body)"); return }
            #expect(error.rule == rule, "\(body): \(error)")
            #expect(result.response.status == 400)
        }
    }

    @Test("a body over the limit and one that is not UTF-8 are refused without reading a token")
    func oversized() async throws {
        try await LogoutFixture.run { fixture throws in
            let endpoint = BackChannelLogoutEndpoint(verifier: fixture.verifier, keys: fixture.keys)
            let huge = Array("logout_token=".utf8) + Array(repeating: UInt8(ascii: "a"), count: endpoint.maximumBodyLength)
            #expect(await endpoint.handle(contentType: Self.form, body: huge).response.status == 400)
            let result = await endpoint.handle(contentType: Self.form, body: Array("logout_token=".utf8) + [0xFF, 0xFE])
            guard case .refused(let error) = result.outcome else { Issue.record("accepted"); return }
            #expect(error.rule == .missingToken)
        }
    }

    @Test("without a store, the outcome says whom to log out; a store without deleteLogins answers 400")
    func outcomeAndUnsupportedStore() async throws {
        struct OldStore: TokenStore {
            func load(_ key: TokenStoreKey) async throws -> StoredLogin? { nil }
            func save(_ login: StoredLogin, for key: TokenStoreKey) async throws {}
            func delete(_ key: TokenStoreKey) async throws {}
            func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T { try await body() }
        }
        try await LogoutFixture.run { fixture throws in
            let endpoint = BackChannelLogoutEndpoint(verifier: fixture.verifier, keys: fixture.keys)
            let token = try await fixture.provider.logoutToken(TestProvider.LogoutTokenContents(subject: nil, sessionID: "s-1"))
            let result = await endpoint.handle(contentType: Self.form, body: Self.body(token))
            guard case .logout(let verified) = result.outcome else { Issue.record("refused: \(result.outcome)"); return }
            #expect(verified.sessionID == "s-1" && verified.subject == nil)
            #expect(result.response.status == 200)

            let second = try await fixture.provider.logoutToken(TestProvider.LogoutTokenContents(subject: "u"))
            let failed = await endpoint.handle(contentType: Self.form, body: Self.body(second), deletingFrom: OldStore())
            #expect(failed.response.status == 400)
            #expect(Self.json(failed.response)["error_description"]?.contains("could not be deleted") == true)
        }
    }

    @Test("a store that fails once: the answer is 400, and the provider's retry of the same token is taken (200), not refused as a replay; a third delivery is a replay")
    func retryAfterFailedDelete() async throws {
        final class FlakyStore: TokenStore, @unchecked Sendable {
            let inner = InMemoryTokenStore()
            private let lock = NSLock()
            private var failures = 1
            func load(_ key: TokenStoreKey) async throws -> StoredLogin? { await inner.load(key) }
            func save(_ login: StoredLogin, for key: TokenStoreKey) async throws { await inner.save(login, for: key) }
            func delete(_ key: TokenStoreKey) async throws { await inner.delete(key) }
            func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
                try await inner.withLock(key, body)
            }
            func deleteLogins(_ selector: LoginSelector) async throws -> Int {
                let fail = lock.withLock { () -> Bool in
                    defer { failures -= 1 }
                    return failures > 0
                }
                if fail { throw OIDCError(.storageFailure, "The disk is full.") }
                return try await inner.deleteLogins(selector)
            }
        }
        try await LogoutFixture.run { fixture throws in
            let endpoint = BackChannelLogoutEndpoint(verifier: fixture.verifier, keys: fixture.keys)
            let token = try await fixture.provider.logoutToken(TestProvider.LogoutTokenContents(subject: "u"))
            let store = FlakyStore()
            let first = await endpoint.handle(contentType: Self.form, body: Self.body(token), deletingFrom: store)
            #expect(first.response.status == 400)
            let retry = await endpoint.handle(contentType: Self.form, body: Self.body(token), deletingFrom: store)
            #expect(retry.response.status == 200, "\(Self.json(retry.response))")
            let third = await endpoint.handle(contentType: Self.form, body: Self.body(token), deletingFrom: store)
            guard case .refused(let error) = third.outcome else { Issue.record("a third delivery was taken"); return }
            #expect(error.rule == .replayed)
        }
    }
}
