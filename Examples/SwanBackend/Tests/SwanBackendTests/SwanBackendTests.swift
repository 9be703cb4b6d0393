import Foundation
import Hummingbird
import OIDC
import OIDCPostgres
import OIDCTesting
import PostgresNIO
@testable import SwanBackend
import SwanStandIns
import Testing

/// The backend over real loopback HTTP against OIDCTesting's provider configured like Swan (a
/// confidential client that authenticates with client_secret_post, scope `openid offline`) and a
/// stand-in for Swan's consent API that checks bearer tokens at the provider.
@Suite("SwanBackend against a provider configured like Swan", .timeLimit(.minutes(1)))
struct SwanBackendTests {
    static let clientID = "SANDBOX_TEST_CLIENT"
    static let secret = "a-client-secret-that-never-leaves-the-server"

    struct Harness {
        let provider: TestProvider
        let backend: SwanBackend
        let api: ConsentAPIStandIn
        let base: String
        let transport: NIOHTTPTransport

        func get(_ url: String, cookie: String? = nil) async throws -> OIDC.HTTPResponse {
            var headers = OIDC.HTTPHeaders()
            if let cookie { headers.add("Cookie", cookie) }
            return try await transport.send(OIDC.HTTPRequest(url: try #require(URL(string: url)), headers: headers))
        }

        /// `/auth` → the provider → the callback URL, with the login cookie `/auth` set.
        func startLogin() async throws -> (callback: String, cookie: String, authorize: URLComponents) {
            let start = try await get(base + "/auth")
            #expect(start.status == 302)
            let cookie = try #require(Self.pair(start.headers.values("Set-Cookie"), backend.loginCookie))
            let location = try #require(start.headers["Location"])
            let atProvider = try await get(location)
            return (try #require(atProvider.headers["Location"]), cookie, try #require(URLComponents(string: location)))
        }

        /// A whole login; the session id from the app's deep link and the session cookie.
        func logIn() async throws -> (session: String, cookie: String) {
            let (callback, cookie, _) = try await startLogin()
            let finish = try await get(callback, cookie: cookie)
            #expect(finish.status == 302)
            let location = try #require(finish.headers["Location"])
            let link = try #require(URLComponents(string: location))
            let session = try #require(link.queryItems?.first { $0.name == "session" }?.value)
            let sessionCookie = try #require(Self.pair(finish.headers.values("Set-Cookie"), backend.sessionCookie))
            return (session, sessionCookie)
        }

        static func pair(_ headers: [String], _ name: String) -> String? {
            headers.lazy.compactMap { $0.split(separator: ";").first.map(String.init) }.first { $0.hasPrefix(name + "=") }
        }
    }

    func withSwan(
        authorize: TestProvider.AuthorizeBehaviour = .signIn, sessions: any TokenStore = InMemoryTokenStore(),
        _ body: @escaping @Sendable (Harness) async throws -> Void
    ) async throws {
        let client = TestProvider.Client.confidential(
            id: Self.clientID, secret: Self.secret, authentication: .clientSecretPost, redirectURIs: ["http://127.0.0.1/auth/callback"]
        )
        try await withTestProvider(TestProvider.Configuration(clients: [client], authorizeBehaviour: authorize)) { provider in
            try await withNIOHTTPTransport { transport in
                let api = ConsentAPIStandIn(provider: provider, transport: transport, statuses: ["consent-1": "Accepted"])
                let apiRouter = Router()
                api.addRoutes(to: apiRouter)
                try await serve(apiRouter) { apiPort in
                    // The port is reserved, released, then bound: a connection of a test running
                    // beside may take it in between (one make test in six did). Then another port.
                    for attempt in 1...5 {
                        let port = try reserveLoopbackPort()
                        let settings = SwanSettings(
                            clientID: Self.clientID, clientSecret: Secret(Self.secret), publicBaseURL: URL(string: "http://127.0.0.1:\(port)")!,
                            issuer: provider.issuer, apiURL: URL(string: "http://127.0.0.1:\(apiPort)/graphql")!
                        )
                        let backend = try await SwanBackend.start(settings, transport: transport, sessions: sessions)
                        let router = Router()
                        backend.addRoutes(to: router)
                        do {
                            try await serve(router, port: port) { _ in
                                try await body(Harness(provider: provider, backend: backend, api: api, base: "http://127.0.0.1:\(port)", transport: transport))
                            }
                            return
                        } catch where attempt < 5 && String(describing: error).contains("Address already in use") && String(describing: error).contains("bind(") {
                            continue
                        }
                    }
                }
            }
        }
    }

    @Test("/auth binds the login to the browser and sends it to Swan's authorization URL")
    func authRedirect() async throws {
        try await withSwan { swan in
            let start = try await swan.get(swan.base + "/auth")
            #expect(start.status == 302)
            #expect(start.headers["Cache-Control"] == "no-store")
            let cookie = try #require(start.headers.values("Set-Cookie").first { $0.hasPrefix(swan.backend.loginCookie + "=") })
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Lax"))
            #expect(cookie.contains("Path=/auth"))
            #expect(!cookie.contains("Secure"))  // http here; see the https test
            let location = try #require(start.headers["Location"])
            let authorize = try #require(URLComponents(string: location))
            let query = Dictionary(uniqueKeysWithValues: (authorize.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(query["client_id"] == Self.clientID)
            #expect(query["scope"] == "openid offline")
            #expect(query["redirect_uri"] == swan.base + "/auth/callback")
            #expect(query["code_challenge_method"] == "S256")
            #expect(query["state"]?.count == 43)
            #expect(query["client_secret"] == nil)  // the secret never goes through the browser
        }
    }

    @Test("the callback exchanges the code with client_secret_post and keeps the tokens server-side")
    func login() async throws {
        try await withSwan { swan in
            let (callback, cookie, _) = try await swan.startLogin()
            let finish = try await swan.get(callback, cookie: cookie)
            #expect(finish.status == 302)
            let location = try #require(finish.headers["Location"])
            #expect(location.hasPrefix("com.example.app://swan/logged-in?session="))
            #expect(!location.contains("token"))  // only the session id goes to the app
            let session = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "session" }?.value)

            let stored = try await swan.backend.sessions.load(try swan.backend.key(forSession: session))
            #expect(stored?.subject == "test-user")
            #expect(stored?.tokens.refreshToken != nil)
            // The provider accepts this client's secret only in the form body: the exchange worked, so it was there.
            #expect(await swan.provider.grantCount("authorization_code") == 1)

            let cookies = finish.headers.values("Set-Cookie")
            #expect(cookies.contains { $0.hasPrefix(swan.backend.loginCookie + "=;") && $0.contains("Max-Age=0") })
            let sessionCookie = try #require(cookies.first { $0.hasPrefix(swan.backend.sessionCookie + "=") })
            #expect(sessionCookie.contains("HttpOnly") && sessionCookie.contains("Path=/consent"))
        }
    }

    @Test("a callback in another browser (no login cookie) is refused before any exchange")
    func callbackWithoutCookie() async throws {
        try await withSwan { swan in
            let (callback, _, _) = try await swan.startLogin()
            let stranger = try await swan.get(callback)
            #expect(stranger.status == 400)
            let otherBrowser = try await swan.get(callback, cookie: swan.backend.loginCookie + "=not-a-login")
            #expect(otherBrowser.status == 400)
            #expect(await swan.provider.grantCount("authorization_code") == 0)
        }
    }

    @Test("a forged state is refused without ending the login in progress: the real callback still completes it, once")
    func forgedState() async throws {
        try await withSwan { swan in
            let (callback, cookie, _) = try await swan.startLogin()
            var components = try #require(URLComponents(string: callback))
            components.queryItems = components.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 }
            // A cross-site navigation to the callback carries the browser's Lax cookie: it must not
            // throw away the login the user is in the middle of (security review 3, I4).
            let forged = try await swan.get(try #require(components.string), cookie: cookie)
            #expect(forged.status == 400)
            #expect(await swan.provider.grantCount("authorization_code") == 0)
            let real = try await swan.get(callback, cookie: cookie)
            #expect(real.status == 302)
            #expect(real.headers["Location"]?.hasPrefix("com.example.app://swan/logged-in?session=") == true)
            let replay = try await swan.get(callback, cookie: cookie)
            #expect(replay.status == 400)  // single use
            #expect(await swan.provider.grantCount("authorization_code") == 1)
        }
    }

    @Test("Swan's refusal reaches the app as an error, without a session")
    func accessDenied() async throws {
        try await withSwan(authorize: .error("access_denied", description: "The user said no")) { swan in
            let (callback, cookie, _) = try await swan.startLogin()
            let finish = try await swan.get(callback, cookie: cookie)
            #expect(finish.status == 302)
            #expect(finish.headers["Location"] == "com.example.app://swan/logged-in?error=access_denied")
            #expect(!finish.headers.values("Set-Cookie").contains { $0.hasPrefix(swan.backend.sessionCookie) })
        }
    }

    @Test("the consent callback trusts Swan's API, not the status in the URL")
    func consentConfirmedWithTheAPI() async throws {
        try await withSwan { swan in
            let (session, cookie) = try await swan.logIn()
            let url = swan.base + "/consent/callback?consentId=consent-1&env=Sandbox&status=Canceled&resourceId=account-9"
            let answer = try await swan.get(url, cookie: cookie)
            #expect(answer.status == 302)
            // Only what Swan confirmed reaches the app: not the URL's status, nor its resourceId.
            #expect(answer.headers["Location"] == "com.example.app://swan/consent?consentId=consent-1&status=Accepted")
            let stored = try await swan.backend.sessions.load(try swan.backend.key(forSession: session))
            #expect(await swan.api.tokensSeen == [try #require(stored?.tokens.accessToken.revealedValue)])

            await swan.api.setStatus("CustomerRefused", for: "consent-1")
            let forged = try await swan.get(swan.base + "/consent/callback?consentId=consent-1&env=Sandbox&status=Accepted", cookie: cookie)
            #expect(forged.headers["Location"] == "com.example.app://swan/consent?consentId=consent-1&status=CustomerRefused")
        }
    }

    @Test("consent callbacks: malformed, without a session, unknown consent")
    func consentRefusals() async throws {
        try await withSwan { swan in
            let (_, cookie) = try await swan.logIn()
            let missing = try await swan.get(swan.base + "/consent/callback?env=Sandbox&status=Accepted", cookie: cookie)
            #expect(missing.status == 400)
            let repeated = try await swan.get(
                swan.base + "/consent/callback?consentId=a&consentId=b&env=Sandbox&status=Accepted", cookie: cookie
            )
            #expect(repeated.status == 400)
            let noSession = try await swan.get(swan.base + "/consent/callback?consentId=consent-1&env=Sandbox&status=Accepted")
            #expect(noSession.status == 401)
            let unknown = try await swan.get(swan.base + "/consent/callback?consentId=nope&env=Sandbox&status=Accepted", cookie: cookie)
            #expect(unknown.status == 404)
            let live = try await swan.get(swan.base + "/consent/callback?consentId=consent-1&env=Live&status=Accepted", cookie: cookie)
            #expect(live.status == 400)  // a sandbox client's server takes no live consent
            #expect(await swan.api.tokensSeen.count == 1)
        }
    }

    @Test("an expired access token is refreshed with the client secret on the API's 401")
    func refreshOnUnauthorized() async throws {
        try await withSwan { swan in
            let (_, cookie) = try await swan.logIn()
            await swan.provider.expireAccessTokens()
            let answer = try await swan.get(swan.base + "/consent/callback?consentId=consent-1&env=Sandbox&status=Accepted", cookie: cookie)
            #expect(answer.status == 302)
            #expect(await swan.api.unauthorizedCount == 1)
            #expect(await swan.provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("a refused refresh ends the session")
    func refusedRefresh() async throws {
        try await withSwan { swan in
            let (session, cookie) = try await swan.logIn()
            await swan.provider.expireAccessTokens()
            await swan.provider.failNextTokenRequests(1, with: .invalidGrant)
            let answer = try await swan.get(swan.base + "/consent/callback?consentId=consent-1&env=Sandbox&status=Accepted", cookie: cookie)
            #expect(answer.status == 401)
            #expect(try await swan.backend.sessions.load(try swan.backend.key(forSession: session)) == nil)
        }
    }

    @Test("behind https, the cookies are __Host- cookies: Secure, host-only, path /")
    func secureCookies() async throws {
        try await withSwan { swan in
            var settings = swan.backend.settings
            settings.publicBaseURL = try #require(URL(string: "https://backend.example.com"))
            let https = try await SwanBackend.start(settings, transport: swan.transport)
            let response = try await https.startLogin()
            let cookie = try #require(response.headers[values: .setCookie].first)
            #expect(cookie.hasPrefix("__Host-swan_login="))
            #expect(cookie.contains("; Secure"))
            #expect(cookie.contains("Path=/;") || cookie.hasSuffix("Path=/"))
            #expect(!cookie.contains("Domain"))
            #expect(cookie.contains("SameSite=Lax"))
        }
    }

    @Test(
        "with DATABASE_URL, sessions are kept sealed in PostgreSQL and a second instance serves them",
        .enabled(
            if: ProcessInfo.processInfo.environment["OIDC_TEST_DATABASE_URL"] != nil,
            "OIDC_TEST_DATABASE_URL is not set: scripts/postgres.sh run (make examples does) starts a throw-away PostgreSQL"))
    func sessionsInPostgres() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["OIDC_TEST_DATABASE_URL"])
        let key = String(repeating: "ab", count: 32)
        let (store, _, client) = try #require(try SessionStore.postgres(environment: ["DATABASE_URL": url, "OIDC_TOKEN_KEY": key]))
        #expect(throws: SwanBackendError.self) { try SessionStore.postgres(environment: ["DATABASE_URL": url]) }
        let running = Task { await client.run() }
        defer { running.cancel() }
        try await store.migrate()
        try await withSwan(sessions: store) { swan in
            let (session, cookie) = try await swan.logIn()
            let sessionKey = try swan.backend.key(forSession: session)
            let stored = try #require(try await store.load(sessionKey))
            // The row holds no token in clear.
            let rows = try await client.query(
                "SELECT record FROM \(unescaped: store.table) WHERE service = \(sessionKey.service) AND account = \(sessionKey.account)")
            var record: [UInt8] = []
            for try await bytes in rows.decode(ByteBuffer.self) { record = Array(bytes.readableBytesView) }
            let text = String(decoding: record, as: UTF8.self)
            #expect(!record.isEmpty && !text.contains(stored.tokens.accessToken.revealedValue))

            // Another instance of the backend, on the same table, knows the session and refreshes it.
            let other = try await SwanBackend.start(swan.backend.settings, transport: swan.transport, sessions: store)
            await swan.provider.expireAccessTokens()
            let status = try await ConsentAPI(url: swan.backend.settings.apiURL).status(of: "consent-1", session: try other.session(session))
            #expect(status == .accepted)
            #expect(await swan.provider.grantCount("refresh_token") == 1)
            #expect(try await store.load(sessionKey)?.tokens.accessToken != stored.tokens.accessToken)
            _ = cookie
            try await store.delete(sessionKey)
        }
    }

    @Test("the partner API follows the client id: sandbox for SANDBOX_, live for LIVE_")
    func environmentFromClientID() {
        let sandbox = SwanSettings(clientID: "SANDBOX_X", clientSecret: Secret("s"), publicBaseURL: URL(string: "https://b.example")!)
        let live = SwanSettings(clientID: "LIVE_X", clientSecret: Secret("s"), publicBaseURL: URL(string: "https://b.example")!)
        #expect(sandbox.apiURL.absoluteString == "https://api.swan.io/sandbox-partner/graphql")
        #expect(live.apiURL.absoluteString == "https://api.swan.io/live-partner/graphql")
        #expect(sandbox.environment == .sandbox && live.environment == .live)
    }
}
