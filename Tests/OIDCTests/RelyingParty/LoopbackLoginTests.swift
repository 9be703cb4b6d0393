import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `RelyingParty.loopbackLogin()` over real loopback HTTP: the listener, a browser that follows
/// redirects and signs in, the callback, the exchange; the listener closed on every path.
@Suite("Loopback login through the relying party", .timeLimit(.scaledMinutes(1)))
struct RelyingPartyLoopbackLoginTests {
    /// Opens the URL in the background, as a system browser does, and signs in on the provider's page.
    struct BackgroundBrowser: BrowserLauncher {
        var choice = TestBrowser.Choice.approve
        func open(_ url: URL) async throws(OIDCError) {
            let browser = TestBrowser(choice: choice)
            Task { _ = try await browser.open(url) }
        }
    }

    /// Another local program that got the start URL (from a command line, say) and gets there first:
    /// it opens it and signs in with its own session; then the user's browser opens it. Records the
    /// user's page, and each `loginEnded`.
    struct RacedBrowser: BrowserLauncher {
        let seen: Seen
        func open(_ url: URL) async throws(OIDCError) {
            let attacker = TestBrowser()
            let seen = self.seen
            Task {
                let attackers = try await attacker.open(url)
                seen.note("attacker: \(attackers.status)")
                let users = try await NIOHTTPTransport.shared.send(HTTPRequest(url: url), options: HTTPRequestOptions(timeout: .scaled(.seconds(10))))
                seen.note("user: \(users.status)")
            }
        }
        func loginEnded(_ url: URL) async { seen.note("ended") }
    }

    struct BrokenBrowser: BrowserLauncher {
        func open(_ url: URL) async throws(OIDCError) { throw OIDCError(.invalidArgument, "No browser could be opened.") }
    }

    /// Records what the login showed and reported.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var urls: [URL] = []
        private var progress: [String] = []
        private var notes: [String] = []
        func show(_ url: URL) { lock.withLock { urls.append(url) } }
        func note(_ text: String) { lock.withLock { notes.append(text) } }
        var noted: [String] { lock.withLock { notes } }
        func report(_ event: LoopbackLogin.Progress) {
            lock.withLock {
                switch event {
                case .browserFailed: progress.append("browserFailed")
                case .callbackReceived: progress.append("callbackReceived")
                }
            }
        }
        var shown: [URL] { lock.withLock { urls } }
        var events: [String] { lock.withLock { progress } }
    }

    /// Whether something still accepts connections on the start URL's port.
    static func isListening(_ url: URL) async -> Bool {
        (try? await NIOHTTPTransport.shared.send(HTTPRequest(url: url), options: HTTPRequestOptions(timeout: .scaled(.seconds(2))))) != nil
    }

    @Test("runLogin: the start URL shown first, the browser signs in, the ID token verified; then the listener is closed")
    func success() async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            let rp = try await provider.relyingParty()
            let seen = Seen()
            var login = rp.loopbackLogin(scopes: ["openid", "offline_access"])
            login.browser = BackgroundBrowser()
            login.configure = { $0.uiLocales = "sv en" }
            login.onProgress = { seen.report($0) }
            let verified = try await login.runLogin { seen.show($0) }
            #expect(verified.idToken?.claims.subject == "test-user")
            #expect(verified.idToken?.token == verified.tokens.idToken && verified.subject == "test-user")
            #expect(verified.tokens.refreshToken != nil)
            // The verified reading is this process's: a store keeps the token, a login read back has
            // no reading, and the reading is no part of ==.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-login-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try FileKeychain(directory: URL(fileURLWithPath: directory))
            let key = TokenStoreKey(service: "loopback-test", account: "me")
            try await rp.save(verified, in: store, as: key)
            let loaded = try #require(try await store.load(key))
            #expect(loaded.idToken == nil && loaded.tokens.idToken == verified.tokens.idToken && loaded.subject == verified.subject)
            var unread = verified
            unread.idToken = nil
            #expect(unread == verified)
            // The same in memory, and after a session's refresh: the reading of the login's first ID
            // token never stands beside another token.
            let memory = InMemoryTokenStore()
            try await rp.save(verified, in: memory, as: key)
            #expect(try await memory.load(key)?.idToken == nil)
            let session = rp.session(store: memory, key: key, allowlist: .default(for: provider.protectedResource))
            _ = try await session.validTokens(forceRefresh: true)
            let refreshed = try #require(try await session.login)
            #expect(refreshed.idToken == nil && refreshed.tokens.accessToken != verified.tokens.accessToken)
            let start = try #require(seen.shown.first)
            #expect(start.host == "127.0.0.1" && start.path.count > 20)
            #expect(seen.events == ["callbackReceived"])
            #expect(await provider.grantCount("authorization_code") == 1)
            #expect(!(await Self.isListening(start)))
        }
    }

    @Test("runLogin: another program opens the start URL first and signs in; the user's browser then opens it: startURLReused, and no code is exchanged")
    func racedLoginAborted() async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            let rp = try await provider.relyingParty()
            let seen = Seen()
            var login = rp.loopbackLogin()
            login.browser = RacedBrowser(seen: seen)
            login.onProgress = { seen.report($0) }
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin { seen.show($0) } }
            #expect(error?.code == .startURLReused)
            #expect(error?.category == .security)
            #expect(seen.events.isEmpty)
            #expect(await provider.grantCount("authorization_code") == 0)
            #expect(!(await Self.isListening(try #require(seen.shown.first))))
            for _ in 0..<TestTime.scaled(100) where seen.noted.count < 3 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(seen.noted.contains("attacker: 200"))
            #expect(seen.noted.contains("user: 409"))
            #expect(seen.noted.filter { $0 == "ended" }.count == 1)
        }
    }

    @Test("runLogin: a browser that cannot start is reported, the login waits for the URL shown, and times out closing the listener")
    func brokenBrowserAndTimeout() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let seen = Seen()
            var login = rp.loopbackLogin()
            login.browser = BrokenBrowser()
            login.timeout = .milliseconds(300)
            login.onProgress = { seen.report($0) }
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin { seen.show($0) } }
            #expect(error?.code == .loginTimedOut)
            #expect(seen.events == ["browserFailed"])
            #expect(!(await Self.isListening(try #require(seen.shown.first))))
        }
    }

    @Test("runLogin: the provider's refusal ends the login with its error, and the listener is closed")
    func refusal() async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            let rp = try await provider.relyingParty()
            let seen = Seen()
            var login = rp.loopbackLogin()
            login.browser = BackgroundBrowser(choice: .deny)
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin { seen.show($0) } }
            #expect(error?.code == .providerError && error?.providerError?.error == "access_denied")
            #expect(await provider.grantCount("authorization_code") == 0)
            #expect(!(await Self.isListening(try #require(seen.shown.first))))
        }
    }

    @Test("runLogin: a bad request setting is refused before the browser opens, and the listener is closed")
    func badConfiguration() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let seen = Seen()
            var login = rp.loopbackLogin()
            login.browser = BackgroundBrowser()
            login.configure = { $0.additionalParameters.append(OAuthParameter("state", "mine")) }
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin { seen.show($0) } }
            #expect(error?.code == .reservedParameter)
            #expect(seen.shown.isEmpty)
            #expect(await provider.requestCount(.authorize) == 0)
        }
    }

    @Test("runLogin: cancelling the task ends the wait with cancelled")
    func cancellation() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            var login = rp.loopbackLogin()
            login.browser = nil
            let task = Task { try await login.runLogin() }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            let error = await #expect(throws: OIDCError.self) { try await task.value }
            #expect(error?.code == .cancelled)
        }
    }
}
