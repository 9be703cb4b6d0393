import Foundation
import Hummingbird
import OIDC
import OIDCResourceServer

/// Swan's server-side login and consent redirects, as Hummingbird routes:
///
/// - `GET /auth`: a new login bound to this browser by an HttpOnly, SameSite=Lax cookie (on https a
///   `__Host-` cookie: Secure, host-only, so a sibling subdomain cannot plant one); redirects to
///   Swan's authorization URL (state, nonce and PKCE S256).
/// - `GET /auth/callback`: only in the browser that started the login; checks the state (and
///   `iss`), exchanges the code with the client secret (`client_secret_post`), verifies the ID
///   token, keeps the tokens server-side under a new session id and redirects to the app's deep
///   link with that id. The tokens never leave the server.
/// - `GET /consent/callback`: parses `consentId`, `env`, `status`, `resourceId`, refuses another
///   environment's consent, then asks Swan's API for the consent's status with the session's access
///   token, and tells the app the consent id and what Swan says, nothing the URL says.
/// - `POST /backchannel-logout`: the provider's back-channel logout (OIDC Back-Channel Logout
///   1.0): a verified logout token deletes the sessions of its user or of its provider session
///   (`sid`), in every instance when the sessions are in PostgreSQL; `200`, or `400` with a JSON
///   error. Register `{publicBaseURL}/backchannel-logout` as the client's `backchannel_logout_uri`.
public struct SwanBackend: Sendable {
    public let settings: SwanSettings
    /// This backend at Swan: Swan's preset (`client_secret_post`) over its discovered endpoints.
    public let swan: RelyingParty
    /// The tokens of every session (service `swan-backend`, account = the SHA-256 of the session id).
    public let sessions: any TokenStore
    /// Logins between `/auth` and `/auth/callback`, by the browser's login cookie.
    let pending = PendingAuthorizations()
    /// The back-channel logout endpoint: logout tokens checked with Swan's keys, their `jti`s
    /// remembered in the replay store given to ``start(_:transport:sessions:replays:)``.
    public let logout: BackChannelLogoutEndpoint

    /// The cookie that binds a login in progress to its browser, 10 minutes: `swan_login` (path
    /// `/auth`), or `__Host-swan_login` (path `/`) on https.
    public var loginCookie: String { settings.usesHTTPS ? "__Host-swan_login" : "swan_login" }
    /// The cookie that names the session for redirects through the browser (consents):
    /// `swan_session` (path `/consent`), or `__Host-swan_session` (path `/`) on https.
    public var sessionCookie: String { settings.usesHTTPS ? "__Host-swan_session" : "swan_session" }

    /// Discovers Swan's endpoints and keys and prepares the routes. `replays` remembers the
    /// logout tokens' `jti`s: give every instance the same one (`PostgresReplayStore`) when the
    /// sessions are shared.
    public static func start(
        _ settings: SwanSettings, transport: any HTTPTransport, sessions: any TokenStore = InMemoryTokenStore(),
        replays: any ReplayStore = InMemoryReplayStore()
    ) async throws -> SwanBackend {
        let swan = try await RelyingParty.discover(
            issuer: settings.issuer, clientID: settings.clientID, clientSecret: settings.clientSecret, preset: .swan, transport: transport
        )
        guard let keys = swan.keys else { throw SwanBackendError.noKeys }
        let verifier = LogoutTokenVerifier(issuer: swan.provider.issuer, clientID: settings.clientID, replayStore: replays)
        return SwanBackend(settings: settings, swan: swan, sessions: sessions, logout: BackChannelLogoutEndpoint(verifier: verifier, keys: keys))
    }

    init(settings: SwanSettings, swan: RelyingParty, sessions: any TokenStore, logout: BackChannelLogoutEndpoint) {
        self.settings = settings
        self.swan = swan
        self.sessions = sessions
        self.logout = logout
    }

    /// The store key of a session: its id's SHA-256, never the id itself. The id is the session
    /// cookie, a bearer secret, while store keys appear in error messages, logs and the table.
    public func key(forSession id: String) throws -> TokenStoreKey {
        try TokenStoreKey(service: "swan-backend", hashingAccount: Secret(id))
    }

    /// The session's tokens in use: the bearer token goes to Swan's API host only, refreshed before
    /// expiry and once on a 401 (with the client secret); a refused refresh ends the session.
    public func session(_ id: String) throws -> AuthenticatedSession {
        swan.session(store: sessions, key: try key(forSession: id), allowlist: .default(for: settings.apiURL))
    }

    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("auth") { _, _ in try await self.startLogin() }
        router.get("auth/callback") { request, _ in await self.finishLogin(request) }
        router.get("consent/callback") { request, _ in await self.confirmConsent(request) }
        router.post("backchannel-logout") { request, _ in await self.backChannelLogout(request) }
    }

    // MARK: - Back-channel logout

    /// The provider's `POST` of a logout token: the sessions it names are deleted from the store.
    func backChannelLogout(_ request: Request) async -> Response {
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: logout.maximumBodyLength) } catch {
            return Self.page(.badRequest, "The request's body is too large.")
        }
        let result = await logout.handle(
            contentType: request.headers[.contentType], body: Array(body.readableBytesView), deletingFrom: sessions)
        if case .refused(let error) = result.outcome { print("swan-backend: back-channel logout refused: \(error.description)") }
        // The endpoint's headers: Cache-Control always, Content-Type with a JSON error.
        var headers = HTTPFields()
        headers[.cacheControl] = result.response.headers["Cache-Control"]
        headers[.contentType] = result.response.headers["Content-Type"]
        return Response(
            status: HTTPResponse.Status(code: result.response.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: result.response.body)))
    }

    // MARK: - Login

    func startLogin() async throws -> Response {
        let request = try swan.authorizationRequest(redirectURI: settings.redirectURI, scopes: settings.scopes)
        let browser = try await pending.begin(request)
        var response = Response.redirect(to: try await swan.authorizationURL(for: request).absoluteString, type: .found)
        response.headers[.cacheControl] = "no-store"
        response.setCookie(cookie(loginCookie, browser, path: "/auth", maxAge: Int(pending.lifetime.components.seconds)))
        return response
    }

    func finishLogin(_ request: Request) async -> Response {
        // The callback as the browser was sent to it: the registered redirect URI with this query.
        guard let callback = URL(string: settings.redirectURI + "?" + (request.uri.query ?? "")) else {
            return Self.page(.badRequest, "The callback's query is not valid.")
        }
        // Only a callback with this browser's login's state ends it: a forged one leaves it pending.
        guard let browser = request.cookies[loginCookie]?.value, let login = await pending.end(browser, callback: callback) else {
            return Self.page(.badRequest, "This login was not started in this browser, or it has expired. Start again at /auth.")
        }
        do {
            let verified = try await swan.completeLogin(callback: callback, for: login)
            let sessionID = try RandomToken.generate()
            try await swan.save(verified, in: sessions, as: try key(forSession: sessionID))

            var answer = Response.redirect(to: Self.link(settings.appLoginLink, ["session": sessionID]), type: .found)
            answer.headers[.cacheControl] = "no-store"
            answer.setCookie(cookie(loginCookie, "", path: "/auth", maxAge: 0))
            answer.setCookie(cookie(sessionCookie, sessionID, path: "/consent", maxAge: 30 * 86_400))
            return answer
        } catch let error as OIDCError {
            if error.code == .providerError, let provider = error.providerError, request.uri.queryParameters["error"] != nil {
                // Swan's authorization response said no (the user refused, …): the app shows it.
                return Response.redirect(to: Self.link(settings.appLoginLink, ["error": provider.error]), type: .found)
            }
            // The details (never a secret: OIDCError's texts carry none) are for the server's log.
            print("swan-backend: login failed: \(error.description)")
            return Self.page(error.category == .storage ? .internalServerError : .badRequest, "The login failed. Start again at /auth.")
        } catch {
            return Self.page(.internalServerError, "The login could not be stored.")
        }
    }

    // MARK: - Consent

    func confirmConsent(_ request: Request) async -> Response {
        let callback: SwanConsentCallback
        do {
            guard let url = URL(string: settings.publicBaseURL.absoluteString + "/consent/callback?" + (request.uri.query ?? "")) else {
                return Self.page(.badRequest, "The consent redirect's query is not valid.")
            }
            callback = try SwanConsentCallback(url: url)
        } catch {
            return Self.page(.badRequest, "Not a consent redirect: \(error.description)")
        }
        guard callback.environment == settings.environment else {
            return Self.page(.badRequest, "This consent belongs to Swan's \(callback.environment.rawValue) environment, not to this server's.")
        }
        guard let sessionID = request.cookies[sessionCookie]?.value,
            (try? await sessions.load(try key(forSession: sessionID))) != nil
        else {
            return Self.page(.unauthorized, "No session in this browser: log in at /auth first.")
        }
        do {
            let status = try await ConsentAPI(url: settings.apiURL).status(of: callback.consentID, session: try session(sessionID))
            // Only what Swan confirmed: the consent id the API answered for, and its status there.
            // (The URL's resourceId is not passed on: read the resource from the API when you need it.)
            let parameters = ["consentId": callback.consentID, "status": status.rawValue]
            return Response.redirect(to: Self.link(settings.appConsentLink, parameters), type: .found)
        } catch ConsentAPI.Failure.notFound {
            return Self.page(.notFound, "Swan knows no such consent.")
        } catch let error as OIDCError where error.endsLogin {
            // A refused refresh deleted the session.
            return Self.page(.unauthorized, "The session has ended: log in again at /auth.")
        } catch {
            return Self.page(.badGateway, "Swan's API could not confirm the consent; try again.")
        }
    }

    // MARK: - Helpers

    func cookie(_ name: String, _ value: String, path: String, maxAge: Int) -> Cookie {
        // Lax, not Strict: the browser comes back from Swan's site, a cross-site top-level navigation.
        // On https, __Host- cookies: Secure, no Domain, path `/` (RFC 6265bis §4.1.3.2).
        Cookie(
            name: name, value: value, maxAge: maxAge, path: settings.usesHTTPS ? "/" : path, secure: settings.usesHTTPS, httpOnly: true,
            sameSite: .lax
        )
    }

    static func link(_ base: String, _ parameters: [String: String]) -> String {
        var components = URLComponents(string: base) ?? URLComponents()
        components.queryItems = (components.queryItems ?? []) + parameters.sorted { $0.key < $1.key }.map(URLQueryItem.init)
        return components.string ?? base
    }

    static func page(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n"))
        )
    }
}

/// Why the backend cannot start.
public enum SwanBackendError: Error, CustomStringConvertible {
    case noTokenKey
    case noKeys

    public var description: String {
        switch self {
        case .noTokenKey:
            "DATABASE_URL is set but no key seals the tokens: set OIDC_TOKEN_KEY_FILE to a file holding 32 random bytes (openssl rand -base64 32 > key; chmod 600 key), or OIDC_TOKEN_KEY."
        case .noKeys:
            "The provider's discovery document names no jwks_uri: its ID tokens and logout tokens cannot be verified."
        }
    }
}
