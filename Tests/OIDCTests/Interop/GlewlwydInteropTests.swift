import Foundation
import OIDC
import OIDCTesting
import Synchronization
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Interoperability with glewlwyd 2.7.5 (Debian's package), an OpenID provider in C we did not
/// write, started by `make test-package` (`scripts/glewlwyd.sh start`, docs/glewlwyd.md) and named
/// by the `OIDC_GLEWLWYD_*` variables it prints. Over real HTTP, through the public API only: a
/// device login that the test user agent (`scripts/glewlwyd-agent.py`) approves, client
/// credentials with `client_secret_basic`, `private_key_jwt` and `client_secret_jwt`, and
/// introspection of what they got. glewlwyd has no token exchange (RFC 8693): not tested here.
/// One test at a time: glewlwyd 2.7.5 on SQLite answers concurrent logins of one client with 500s
/// now and then ("FOREIGN KEY constraint failed", "get_sub_public - Error executing h_select" in its log).
@Suite(
    "Interop with glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive, .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_ISSUER"] != nil, "set OIDC_GLEWLWYD_ISSUER (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydInteropTests {
    /// This process's environment, where `make test-package` put the `OIDC_GLEWLWYD_*` variables.
    static let environment = ProcessInfo.processInfo.environment
    /// glewlwyd's `oidc` plugin: `http://127.0.0.1:PORT/api/oidc`.
    static let issuer = environment["OIDC_GLEWLWYD_ISSUER"] ?? ""
    /// The custom scope every client and the user have (`api.read`).
    static let scope = environment["OIDC_GLEWLWYD_SCOPE"] ?? "api.read"
    /// The checkout, for `scripts/glewlwyd-agent.py`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// An `OIDC_GLEWLWYD_*` variable that `scripts/glewlwyd.sh start` exports.
    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_GLEWLWYD_" + name], "OIDC_GLEWLWYD_\(name) is not set: export what scripts/glewlwyd.sh start prints")
    }

    /// The one-line secret in the file an `OIDC_GLEWLWYD_…_SECRET_FILE` variable names.
    static func secret(_ name: String) throws -> Secret {
        let text = try String(contentsOfFile: try variable(name), encoding: .utf8)
        return Secret(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("a device login: a public client with PKCE S256, the test user approving between polls, the ID token verified, userinfo and refresh")
    func deviceLogin() async throws {
        let recorder = FormRecorder()
        let rp = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("PUBLIC_CLIENT_ID"), transport: recorder)
        #expect(rp.provider.clientAuthentication == .none)
        #expect(rp.provider.codeChallengeMethodsSupported.contains("S256"))
        let endpoint = try #require(rp.provider.deviceAuthorizationEndpoint)

        var login = try await rp.deviceLogin(scopes: ["openid", Self.scope])
        #expect(!login.userCode.isEmpty)
        #expect(login.verificationURI.absoluteString == Self.issuer + "/device")
        #expect(login.verificationURIComplete?.absoluteString.hasSuffix(login.userCode) == true)
        #expect(login.interval == .seconds(2))  // GLEWLWYD_DEVICE_INTERVAL, the script's default
        #expect(abs(login.expiresAt.timeIntervalSinceNow - 600) < 30)
        // PKCE S256 on the device authorization request, since glewlwyd names S256 (the names only: values are secrets).
        let asked = try #require(recorder.forms(to: endpoint).first)
        #expect(asked.contains("code_challenge") && asked.contains("code_challenge_method"), "\(asked)")

        // The user approves once the device has been told to wait, so that at least one poll is pending.
        let progress = ProgressLog()
        let (waits, waiting) = AsyncStream.makeStream(of: Void.self)
        login.onProgress = { (event: DeviceLogin.Progress) in
            progress.record(event)
            if case .pending = event { waiting.yield() }
        }
        let user = Task { [userCode = login.userCode] () async throws -> TestAgent.Result? in
            for await _ in waits { return try await Agent.run(["device", userCode, "--issuer", Self.issuer]) }
            return nil
        }
        let started = ContinuousClock.now
        let kept: StoredLogin
        do {
            defer { waiting.finish() }
            kept = try await login.waitForLogin()
        }
        let verified = try #require(kept.idToken.map { (idToken: $0, tokens: kept.tokens) }, "no verified ID token")
        let approval = try #require(try await user.value, "glewlwyd never said authorization_pending")
        #expect(approval.status == 0, "\(approval.output)")
        #expect(approval.output.contains("deviceComplete"), "\(approval.output)")
        // DeviceLogin polls at interval + 1 s: glewlwyd, which says slow_down to any poll within the interval, never should.
        #expect(progress.slowDowns == 0, "slow_down from glewlwyd after \(ContinuousClock.now - started): \(progress.events)")
        #expect(progress.events.first == "pending")

        #expect(!verified.idToken.claims.subject.isEmpty)
        #expect(verified.idToken.claims.issuer == Self.issuer)
        #expect(verified.idToken.claims.audience.contains(rp.clientID))
        #expect(verified.idToken.algorithm == .rs256 && verified.idToken.keyID != nil)
        #expect(verified.tokens.tokenType.lowercased() == "bearer")  // glewlwyd says `bearer`
        #expect(Set(verified.tokens.scopes) == ["openid", Self.scope])
        let polls = recorder.forms(to: try #require(rp.provider.tokenEndpoint))
        #expect(polls.count == progress.events.count + 1)
        #expect(polls.allSatisfy { $0.contains("code_verifier") && $0.contains("device_code") }, "\(polls)")

        let claims = try await rp.tokenClient.userinfo(accessToken: verified.tokens.accessToken, expectedSubject: verified.idToken.claims.subject)
        #expect(claims["sub"]?.stringValue == verified.idToken.claims.subject)
        let refreshed = try await rp.tokenClient.refresh(try #require(verified.tokens.refreshToken))
        #expect(refreshed.accessToken != verified.tokens.accessToken)
        #expect(refreshed.refreshToken == nil)  // rolling: the old one stays valid
    }

    @Test("glewlwyd's own slow_down: a poll that reaches it twice (a retrying proxy) is told to slow down; the next comes at least 5 s later than the interval, and the login completes")
    func deviceSlowDown() async throws {
        let doubler = PollDoubler()
        let rp = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("PUBLIC_CLIENT_ID"), transport: doubler)
        let tokenEndpoint = try #require(rp.provider.tokenEndpoint)
        var login = try await rp.deviceLogin(scopes: ["openid", Self.scope])
        let progress = ProgressLog()
        let (slowed, slowing) = AsyncStream.makeStream(of: Void.self)
        login.onProgress = { (event: DeviceLogin.Progress) in
            progress.record(event)
            if case .slowDown = event { slowing.yield() }
        }
        // The user approves once glewlwyd has said slow_down.
        let user = Task { [userCode = login.userCode] () async throws -> TestAgent.Result? in
            for await _ in slowed { return try await Agent.run(["device", userCode, "--issuer", Self.issuer]) }
            return nil
        }
        // Bounded: a glewlwyd that never says slow_down fails the test in 90 s (scaled), not at the code's expiry.
        let waiting = login
        let verified: StoredLogin? = try await withThrowingTaskGroup(of: StoredLogin?.self) { group in
            group.addTask { try await waiting.waitForLogin() }
            group.addTask {
                try await Task.sleep(for: .scaled(.seconds(90)))
                return nil
            }
            defer {
                group.cancelAll()
                slowing.finish()
            }
            return try await group.next() ?? nil
        }
        let approval = try #require(try await user.value, "glewlwyd never said slow_down: \(progress.events)")
        let finished = try #require(verified, "no login within \(TestTime.scaled(90)) s: \(progress.events)")
        #expect(approval.status == 0, "\(approval.output)")
        #expect(progress.events.contains("slow_down"), "\(progress.events)")
        #expect(finished.idToken?.claims.subject.isEmpty == false)

        // Poll times as glewlwyd saw them: doubled polls until one is told slow_down, then
        // DeviceLogin's own, each at least interval (2 s) + 5 s after the one before.
        let polls = doubler.polls(to: tokenEndpoint)
        let slowedAt = try #require(polls.lastIndex { $0.slowDown }, "\(polls.count) polls, none told slow_down")
        try #require(polls.count >= slowedAt + 2, "\(polls.count) polls")
        let after = polls[slowedAt...].map(\.at)
        let gaps = zip(after.dropFirst(), after).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= .seconds(7) }, "gaps after slow_down: \(gaps)")
    }

    @Test("PAR where glewlwyd requires it: discovery says so, authorizationURL pushes with client_secret_basic by itself, the test user signs in on the request_uri URL, the login completes")
    func pushedAuthorizationRequired() async throws {
        let issuer = try Self.variable("PAR_ISSUER")
        let redirectURI = try Self.variable("REDIRECT_URI")
        let recorder = FormRecorder()
        let rp = try await RelyingParty.discover(
            issuer: issuer, clientID: try Self.variable("PAR_CLIENT_ID"), clientSecret: try Self.secret("PAR_CLIENT_SECRET_FILE"), transport: recorder
        )
        #expect(rp.provider.requiresPushedAuthorizationRequests)
        let endpoint = try #require(rp.provider.pushedAuthorizationRequestEndpoint)
        #expect(endpoint.absoluteString == issuer + "/par")
        let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Self.scope])
        // glewlwyd refuses a plain authorization request here: 403, no redirect.
        let plain = try await NIOHTTPTransport.shared.send(HTTPRequest(url: try request.url()), options: HTTPRequestOptions(followRedirects: false))
        #expect(plain.status == 403)

        let url = try await rp.authorizationURL(for: request)
        let query = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(Set(query.map(\.name)) == ["client_id", "request_uri"])
        let pushed = try #require(recorder.forms(to: endpoint).first)
        #expect(pushed.contains("state") && pushed.contains("nonce") && pushed.contains("code_challenge"), "\(pushed)")
        #expect(!pushed.contains("client_secret"))  // HTTP Basic

        let agent = try await Agent.run(["authorize", url.absoluteString])
        #expect(agent.status == 0, "\(agent.output)")
        let callback = try #require(agent.output.split(separator: "\n").map(String.init).first { $0.hasPrefix(redirectURI) }.flatMap(URL.init(string:)))
        let login = try await rp.completeLogin(callback: callback, for: request)
        #expect(login.idToken.claims.issuer == issuer)
        #expect(login.idToken.claims.nonce == request.nonce)
        #expect(login.clientID == rp.clientID)
    }

    @Test("JAR: a request object signed with the private_key_jwt client's key, by value and through PAR; glewlwyd verifies it, the test user signs in, the login completes")
    func signedRequestObjects() async throws {
        let key = try JWSSigningKey(contentsOfFile: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KEY_FILE"), keyID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KID"))
        var authentication = ClientAuthentication.privateKeyJWT(key)
        authentication.assertionAudience = .endpoint
        let redirectURI = try Self.variable("REDIRECT_URI")
        let recorder = FormRecorder()
        var rp = try await RelyingParty.discover(
            issuer: Self.issuer, clientID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_ID"), authentication: authentication, transport: recorder)
        rp.requestObjectKey = key
        for pushed in [false, true] {
            rp.pushedAuthorization = pushed ? .always : .whenRequired
            let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Self.scope])
            let url = try await rp.authorizationURL(for: request)
            let names = Set(try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems).map(\.name))
            #expect(names == (pushed ? ["client_id", "request_uri"] : ["client_id", "request"]), "\(names)")
            if pushed {
                let endpoint = try #require(rp.provider.pushedAuthorizationRequestEndpoint)
                let form = try #require(recorder.forms(to: endpoint).last)
                #expect(form.contains("request") && !form.contains("state"), "\(form)")
            }
            let agent = try await Agent.run(["authorize", url.absoluteString])
            #expect(agent.status == 0, "pushed \(pushed): \(agent.output)")
            let callback = try #require(agent.output.split(separator: "\n").map(String.init).first { $0.hasPrefix(redirectURI) }.flatMap(URL.init(string:)))
            let login = try await rp.completeLogin(callback: callback, for: request)
            #expect(login.idToken.claims.nonce == request.nonce)
        }
        // glewlwyd does check the signature: an object signed by another key (same kid) gets no code.
        rp.pushedAuthorization = .whenRequired
        rp.requestObjectKey = try JWSSigningKey.generate(.rs256, keyID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KID"))
        let forged = try await rp.authorizationURL(for: try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Self.scope]))
        let refused = try await Agent.run(["authorize", forged.absoluteString])
        #expect(refused.status != 0, "\(refused.output)")
        #expect(!refused.output.contains("code="), "\(refused.output)")
    }

    @Test("client credentials with client_secret_basic; introspection by the same client: active, then a made-up token inactive")
    func clientSecretBasic() async throws {
        let clientID = try Self.variable("CONFIDENTIAL_CLIENT_ID")
        let rp = try await RelyingParty.discover(
            issuer: Self.issuer, clientID: clientID, authentication: .clientSecretBasic(try Self.secret("CONFIDENTIAL_CLIENT_SECRET_FILE"))
        )
        let tokens = try await rp.tokenClient.clientCredentials(scopes: [Self.scope])
        #expect(tokens.tokenType.lowercased() == "bearer")
        #expect(tokens.scopes == [Self.scope])
        #expect(tokens.refreshToken == nil && tokens.idToken == nil)
        #expect(abs((tokens.expiresAt ?? .distantPast).timeIntervalSince(tokens.receivedAt) - 3600) < 5)
        try await Self.expectIntrospection(of: tokens, by: rp.tokenClient)

        // A service session asks for its own tokens, once.
        let session = rp.serviceSession(scopes: [Self.scope], allowlist: .default(for: try #require(rp.provider.tokenEndpoint)))
        let held = try await session.validTokens()
        #expect(try await session.validTokens().accessToken == held.accessToken)
        #expect(try await rp.tokenClient.introspect(held.accessToken).active)

        // A wrong secret: glewlwyd answers 403 with an empty body (not 401 invalid_client).
        let wrong = try await RelyingParty.discover(issuer: Self.issuer, clientID: clientID, authentication: .clientSecretBasic(Secret("not-the-secret")))
        let refused = await #expect(throws: OIDCError.self) { try await wrong.tokenClient.clientCredentials(scopes: [Self.scope]) }
        #expect(refused?.context["status"] == "403")
        #expect(refused?.providerError == nil)
        #expect(refused?.message.contains("not-the-secret") == false)
    }

    @Test("client credentials with private_key_jwt addressed to each endpoint's URL; introspection with an assertion for the introspection endpoint")
    func privateKeyJWT() async throws {
        let key = try JWSSigningKey(contentsOfFile: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KEY_FILE"), keyID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KID"))
        var authentication = ClientAuthentication.privateKeyJWT(key)
        authentication.assertionAudience = .endpoint  // glewlwyd refuses the issuer (see below)
        let rp = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_ID"), authentication: authentication)
        #expect(rp.provider.clientAuthentication == .privateKeyJWT)
        let tokens = try await rp.tokenClient.clientCredentials(scopes: [Self.scope])
        #expect(tokens.scopes == [Self.scope])
        try await Self.expectIntrospection(of: tokens, by: rp.tokenClient)

        let session = rp.serviceSession(scopes: [Self.scope], allowlist: .default(for: try #require(rp.provider.tokenEndpoint)))
        #expect(try await rp.tokenClient.introspect(try await session.validTokens().accessToken, hint: .accessToken).active)
    }

    @Test("private_key_jwt with the issuer as the audience (the library's default): glewlwyd refuses it with a bare 403")
    func privateKeyJWTIssuerAudience() async throws {
        let key = try JWSSigningKey(contentsOfFile: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KEY_FILE"), keyID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_KID"))
        let authentication = ClientAuthentication.privateKeyJWT(key)
        #expect(authentication.assertionAudience == .issuer)
        let rp = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("PRIVATE_KEY_JWT_CLIENT_ID"), authentication: authentication)
        let refused = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials(scopes: [Self.scope]) }
        // glewlwyd 2.7.5 wants aud = the endpoint's URL and says 403 with an empty body (log: invalid jwt assertion content).
        #expect(refused?.code == .providerError, "\(String(describing: refused))")
        #expect(refused?.category == .provider, "\(String(describing: refused))")
        // The message names the likely cause: the audience, and how to change it.
        #expect(refused?.message.contains("assertionAudience .endpoint") == true, "\(String(describing: refused))")
        #expect(refused?.context["status"] == "403")
        #expect(refused?.providerError == nil)
    }

    @Test("private_key_jwt with a key given without a kid: the assertion carries the key's RFC 7638 thumbprint, the kid glewlwyd registered it under, and glewlwyd (which looks keys up by kid) takes it")
    func privateKeyJWTThumbprintKeyID() async throws {
        let key = try JWSSigningKey(contentsOfFile: try Self.variable("THUMBPRINT_KID_CLIENT_KEY_FILE"))
        // Computed here by the library, there by scripts/glewlwyd-jose.py (Python, independently).
        #expect(key.keyID == (try Self.variable("THUMBPRINT_KID_CLIENT_KID")))
        var authentication = ClientAuthentication.privateKeyJWT(key)
        authentication.assertionAudience = .endpoint
        let rp = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("THUMBPRINT_KID_CLIENT_ID"), authentication: authentication)
        let tokens = try await rp.tokenClient.clientCredentials(scopes: [Self.scope])
        #expect(tokens.scopes == [Self.scope])

        // Under another kid glewlwyd refuses it, and the error names the kid it carried.
        let renamed = try JWSSigningKey(contentsOfFile: try Self.variable("THUMBPRINT_KID_CLIENT_KEY_FILE"), keyID: "not-registered")
        var other = ClientAuthentication.privateKeyJWT(renamed)
        other.assertionAudience = .endpoint
        let refusing = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("THUMBPRINT_KID_CLIENT_ID"), authentication: other)
        let refused = await #expect(throws: OIDCError.self) { try await refusing.tokenClient.clientCredentials(scopes: [Self.scope]) }
        #expect(refused?.context["kid"] == "not-registered" && refused?.context["clientAssertion"] == "private_key_jwt", "\(String(describing: refused))")
    }

    @Test("client credentials with client_secret_jwt (HS256) addressed to the endpoint; introspection by the same client")
    func clientSecretJWT() async throws {
        var authentication = ClientAuthentication.clientSecretJWT(try Self.secret("CLIENT_SECRET_JWT_CLIENT_SECRET_FILE"))
        authentication.assertionAudience = .endpoint
        let rp = try await RelyingParty.discover(issuer: Self.issuer, clientID: try Self.variable("CLIENT_SECRET_JWT_CLIENT_ID"), authentication: authentication)
        let tokens = try await rp.tokenClient.clientCredentials(scopes: [Self.scope])
        try await Self.expectIntrospection(of: tokens, by: rp.tokenClient)
    }

    /// `tokens`, introspected by `client`, the client they were issued to: active, with its client,
    /// scope and expiry; then a token glewlwyd never issued: inactive, and nothing else.
    ///
    /// glewlwyd 2.7.5 stores no client for client-credentials tokens of a client that authenticated
    /// with an assertion (`private_key_jwt`, `client_secret_jwt`): their introspection has no
    /// `client_id`, although the access token (a JWT) has one.
    static func expectIntrospection(of tokens: TokenSet, by client: TokenClient) async throws {
        let answer = try await client.introspect(tokens.accessToken, hint: .accessToken)
        #expect(answer.active)
        let byAssertion = [.privateKeyJWT, .clientSecretJWT].contains(client.authentication.method)
        #expect(answer.clientID == (byAssertion ? nil : client.clientID))
        #expect(answer.scopes == [scope])
        #expect(answer.tokenType?.lowercased() == "bearer")
        let expiresAt = try #require(answer.expiresAt)
        #expect(abs(expiresAt.timeIntervalSince(tokens.expiresAt ?? .distantPast)) < 5)
        let unknown = try await client.introspect(Secret("not-a-token-" + UUID().uuidString))
        #expect(!unknown.active)
        #expect(unknown.clientID == nil && unknown.scopes == nil)
    }
}

extension GlewlwydInteropTests {
    /// The real transport, which also remembers the names (never the values) of the form parameters
    /// sent to each URL: to see that PKCE was sent, without a mock.
    final class FormRecorder: HTTPTransport {
        private let inner: any HTTPTransport
        private let sent = Mutex<[(url: URL, names: [String])]>([])

        /// Records what goes through `inner`.
        init(_ inner: any HTTPTransport = NIOHTTPTransport.shared) {
            self.inner = inner
        }

        /// Notes the names of the request's form parameters, then sends it through the real transport.
        func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            let body = String(decoding: request.body, as: UTF8.self)
            let names = body.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" }
            sent.withLock { $0.append((request.url, names)) }
            return try await inner.send(request, options: options)
        }

        /// The parameter names of each request to `url`, in order.
        func forms(to url: URL) -> [[String]] {
            sent.withLock { $0.filter { $0.url == url }.map(\.names) }
        }
    }

    /// The real transport, which sends the first device-code poll twice, back to back, and returns
    /// the second answer (as a proxy that retries would): glewlwyd says `slow_down` to a poll within
    /// its interval of the one before. Notes when each token request was sent.
    final class PollDoubler: HTTPTransport {
        private let inner: any HTTPTransport = NIOHTTPTransport.shared
        private let state = Mutex<(slowedDown: Bool, polls: [(url: URL, at: ContinuousClock.Instant, slowDown: Bool)])>((false, []))

        /// Sends `request`; a poll (one that carries a device code) goes twice, back to back, until
        /// the provider has answered one with `slow_down` (a first pair that met a busy provider
        /// gets another try at the next poll).
        func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            let isPoll = String(decoding: request.body, as: UTF8.self).contains("device_code=")
            guard isPoll else { return try await inner.send(request, options: options) }
            if !state.withLock({ $0.slowedDown }) {
                _ = try await poll(request, options: options)
            }
            return try await poll(request, options: options)
        }

        private func poll(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            let sent = ContinuousClock.now
            let response = try await inner.send(request, options: options)
            let slowDown = String(decoding: response.body, as: UTF8.self).contains("slow_down")
            state.withLock { state in
                state.polls.append((request.url, sent, slowDown))
                if slowDown { state.slowedDown = true }
            }
            return response
        }

        /// When each device-code poll to `url` was sent, in order, and whether it was told to slow down.
        func polls(to url: URL) -> [(at: ContinuousClock.Instant, slowDown: Bool)] {
            state.withLock { $0.polls.filter { $0.url == url }.map { ($0.at, $0.slowDown) } }
        }
    }

    /// What a device login's `onProgress` was told, by name.
    final class ProgressLog: Sendable {
        private let log = Mutex<[String]>([])

        /// Notes `event` by name: `pending`, `slow_down` or `retrying (code)`.
        func record(_ event: DeviceLogin.Progress) {
            let name =
                switch event {
                case .pending: "pending"
                case .slowDown: "slow_down"
                case .retrying(let error, _): "retrying (\(error.code))"
                }
            log.withLock { $0.append(name) }
        }

        /// Every event so far, in order.
        var events: [String] { log.withLock { $0 } }
        /// How many times glewlwyd said `slow_down`.
        var slowDowns: Int { events.filter { $0 == "slow_down" }.count }
    }

    /// `scripts/glewlwyd-agent.py`, the test user's browser.
    enum Agent {
        static func run(_ arguments: [String]) async throws -> TestAgent.Result { try await TestAgent.run("glewlwyd-agent.py", arguments) }
    }
}
