import Foundation
import OIDC
import OIDCTesting
import SchibstedLogin
import Testing

/// The Schibsted preset end to end, with OIDCTesting's provider standing in for the pre environment
/// over real loopback HTTP.
@Suite("SchibstedLogin against a stand-in for pre", .timeLimit(.minutes(1)))
struct SchibstedLoginTests {
    static let clientID = "602525f2b41fa31789a95aa8"
    static let redirectURI = "com.example.app:/login"

    /// Every request the app sends, forwarded unchanged to the real transport.
    final class RecordingTransport: HTTPTransport, @unchecked Sendable {
        let base: any HTTPTransport
        private let lock = NSLock()
        private var recorded: [HTTPRequest] = []
        init(_ base: any HTTPTransport) { self.base = base }
        var requests: [HTTPRequest] { lock.withLock { recorded } }
        func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            lock.withLock { recorded.append(request) }
            return try await base.send(request, options: options)
        }
    }

    /// Runs `body` with a login pointed at a stand-in whose user authenticated with `amr`.
    func withStandIn(
        amr: [String], mfa: Schibsted.MFAMethod?,
        _ body: (TestProvider, SchibstedLogin, RecordingTransport) async throws -> Void
    ) async throws {
        var user = TestUser.default
        user.amr = amr
        let client = TestProvider.Client(id: Self.clientID, redirectURIs: [Self.redirectURI])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("schibsted-login-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestProvider(TestProvider.Configuration(clients: [client], user: user)) { provider in
            try await withNIOHTTPTransport { base in
                let transport = RecordingTransport(base)
                var login = SchibstedLogin(
                    environment: .pre, clientID: Self.clientID, redirectURI: Self.redirectURI, mfa: mfa,
                    keychain: try FileKeychain(directory: directory), transport: transport
                )
                login.standIn(
                    issuer: provider.issuer, authorizationEndpoint: try #require(URL(string: provider.authorizationEndpoint)),
                    tokenEndpoint: try #require(URL(string: provider.tokenEndpoint)), jwksURI: try #require(URL(string: provider.jwksURI))
                )
                try await body(provider, login, transport)
            }
        }
    }

    /// What the browser is sent back to after signing in at the stand-in.
    func redirect(for request: AuthorizationRequest, _ transport: any HTTPTransport) async throws -> URL {
        let answer = try await transport.send(HTTPRequest(url: try request.url()))
        #expect(answer.status == 302)
        return try #require(answer.headers["Location"].flatMap(URL.init(string:)))
    }

    @Test("MFA through acr_values, BankID ignored, X-OIDC: v1, stored under com.schibsted.account + client id")
    func mfaLogin() async throws {
        try await withStandIn(amr: ["pwd", "otp"], mfa: .otp) { provider, login, transport in
            let request = try login.start()
            let query = try #require(URLComponents(url: try request.url(), resolvingAgainstBaseURL: false)?.queryItems)
            #expect(query.map(\.name) == [
                "client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge",
                "code_challenge_method", "acr_values",
            ])
            #expect(query.first { $0.name == "acr_values" }?.value == "otp")
            #expect(query.first { $0.name == "scope" }?.value == "openid offline_access")
            #expect(!query.contains { $0.name == "prompt" })  // acr_values or prompt, never both

            // BankID returning to the app is not the end of the login.
            guard case .keepWaiting = try await login.handle(try #require(URL(string: "com.example.app:/login/bankId")), for: request) else {
                Issue.record("the BankID return was not ignored")
                return
            }
            #expect(await provider.grantCount("authorization_code") == 0)

            guard case .loggedIn(let stored) = try await login.handle(try await redirect(for: request, transport), for: request) else {
                Issue.record("no login")
                return
            }
            #expect(stored.subject == "test-user")
            let tokenRequests = transport.requests.filter { $0.url.absoluteString == provider.tokenEndpoint }
            #expect(tokenRequests.count == 1)
            #expect(tokenRequests.first?.headers["X-OIDC"] == "v1")
            #expect(login.key == TokenStoreKey(service: "com.schibsted.account", account: Self.clientID))
            #expect(try login.keychain.load(login.key)?.subject == "test-user")
        }
    }

    @Test("an ID token without the MFA asked for is refused and nothing is stored")
    func missingMFARefused() async throws {
        try await withStandIn(amr: ["pwd"], mfa: .otp) { _, login, transport in
            let request = try login.start()
            let callback = try await redirect(for: request, transport)
            await #expect(throws: OIDCError.self) { _ = try await login.handle(callback, for: request) }
            #expect(try login.keychain.load(login.key) == nil)
        }
    }

    @Test("without MFA the preset sends prompt=select_account")
    func selectAccount() async throws {
        try await withStandIn(amr: ["pwd"], mfa: nil) { _, login, transport in
            let request = try login.start()
            let query = try #require(URLComponents(url: try request.url(), resolvingAgainstBaseURL: false)?.queryItems)
            #expect(query.last?.name == "prompt")
            #expect(query.last?.value == "select_account")
            guard case .loggedIn = try await login.handle(try await redirect(for: request, transport), for: request) else {
                Issue.record("no login")
                return
            }
        }
    }

    @Test("cancel, a foreign URL and a forged state")
    func otherRedirects() async throws {
        try await withStandIn(amr: ["pwd"], mfa: nil) { _, login, _ in
            let request = try login.start()
            guard case .cancelled = try await login.handle(try #require(URL(string: "com.example.app:/login/cancel")), for: request) else {
                Issue.record("cancel not recognised")
                return
            }
            guard case .notOurs = try await login.handle(try #require(URL(string: "com.other.app:/login?code=x&state=y")), for: request) else {
                Issue.record("a foreign scheme was taken")
                return
            }
            let forged = try #require(URL(string: "com.example.app:/login?code=stolen&state=forged"))
            await #expect(throws: OIDCError.self) { _ = try await login.handle(forged, for: request) }
        }
    }

    @Test("eid-se exists only in pre")
    func countryEIDOnlyInPre() throws {
        let keychain = try FileKeychain(directory: FileManager.default.temporaryDirectory.appendingPathComponent("unused-\(UUID().uuidString)"))
        let sweden = SchibstedLogin(
            environment: .sweden, clientID: Self.clientID, redirectURI: Self.redirectURI, mfa: .eidSE, keychain: keychain,
            transport: NIOHTTPTransport.shared
        )
        #expect(throws: OIDCError.self) { _ = try sweden.start() }
        #expect(sweden.provider.authorizationEndpoint?.absoluteString == "https://login.schibsted.com/oauth/authorize")
    }
}
