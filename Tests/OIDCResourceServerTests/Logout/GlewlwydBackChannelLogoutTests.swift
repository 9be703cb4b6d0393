import Foundation
import OIDC
import OIDCResourceServer
import OIDCTestSupport
import Testing

/// Back-channel logout from a real provider: glewlwyd 2.7.5's issuer `oidc-logout` (session
/// management and back-channel logout on; docs/glewlwyd.md) and its client `swift-logout`, whose
/// `backchannel_logout_uri` the test points at its own loopback listener. A code login through the
/// test user agent keeps the ID token's `sid`; the agent then ends the user's glewlwyd session
/// (`end_session`, then `DELETE …/session/:sid`, as glewlwyd's logout page does), glewlwyd POSTs
/// a logout token, and `BackChannelLogoutEndpoint` verifies it and deletes that login.
///
/// What glewlwyd sends (observed): header `{"typ": "JWT", "alg": "RS256", "kid": …}`, claims
/// `iss`, `aud` (the client id, a string), `sub`, `iat`, `jti`, `sid` and `events` with the
/// back-channel logout event and `{}`; no `exp`, no `nonce`. Two departures from the final
/// OIDC Back-Channel Logout 1.0: it types the token `JWT`, as it types its ID tokens, where the
/// specification recommends (SHOULD) `logout+jwt` and the verifier by default accepts only that or
/// no `typ`; and it sends no `exp`, which the specification lists as required and the verifier
/// accepts when absent. So the verifier here sets `acceptsGenericType`, the documented option for
/// such providers; its default refusal is checked too. With the client's
/// `backchannel_logout_session_required` false, the token has no `sid`, and every login of that
/// user at that client goes.
@Suite(
    "Back-channel logout from glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive, .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_LOGOUT_ISSUER"] != nil, "set the OIDC_GLEWLWYD_* variables (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydBackChannelLogoutTests {
    static let environment = ProcessInfo.processInfo.environment
    static let path = "/backchannel-logout"

    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_GLEWLWYD_" + name], "OIDC_GLEWLWYD_\(name) is not set: export what scripts/glewlwyd.sh start prints")
    }

    static func secret(_ name: String) throws -> Secret {
        Secret(try String(contentsOfFile: try variable(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The JSON object of a base64url JWS segment.
    static func segment(_ part: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64URLEncoding.decode(String(part)))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// A directory of this user only, for the agent's session cookies and the ID token hint.
    static func privateDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("glewlwyd-logout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return directory
    }

    /// One glewlwyd session, from the code login to the logout token's arrival: the verifier and
    /// endpoint the test uses, the login as stored, and the provider's `POST`, still unanswered.
    struct Logout {
        let issuer: String
        let clientID: String
        let keys: JWKSCache
        let endpoint: BackChannelLogoutEndpoint
        let receiver: LoopbackPostReceiver
        let login: StoredLogin
        let post: LoopbackPostReceiver.Request
        /// The agent's arguments that end the session (again).
        let endSession: [String]

        /// The `logout_token` of the `POST`, and its header and claims.
        func token() throws -> (token: String, header: [String: Any], claims: [String: Any]) {
            let form = try #require(URLComponents(string: "?" + String(decoding: post.body, as: UTF8.self))?.queryItems)
            let token = try #require(form.first { $0.name == "logout_token" }?.value)
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            try #require(parts.count == 3)
            return (token, try GlewlwydBackChannelLogoutTests.segment(parts[0]), try GlewlwydBackChannelLogoutTests.segment(parts[1]))
        }

        /// What the endpoint makes of the `POST`, deleting from `store`; glewlwyd gets its answer.
        func handle(deletingFrom store: any TokenStore) async -> BackChannelLogoutEndpoint.Result {
            let result = await endpoint.handle(contentType: post.headers["content-type"], body: post.body, deletingFrom: store)
            await receiver.respond(to: post, status: result.response.status, headers: result.response.headers, body: result.response.body)
            return result
        }
    }

    /// Points `swift-logout` at a new listener (with `sessionRequired` as its
    /// `backchannel_logout_session_required`), logs in through the agent with a real code flow
    /// (PKCE, nonce), lets `beforeLogout` store the login, ends the user's glewlwyd session, and
    /// waits for glewlwyd's `POST` (20 s at most).
    static func logInThenOut(
        sessionRequired: Bool, in directory: URL, _ beforeLogout: (StoredLogin) async throws -> Void,
        _ body: (Logout) async throws -> Void
    ) async throws {
        let issuer = try variable("LOGOUT_ISSUER")
        let clientID = try variable("LOGOUT_CLIENT_ID")
        let redirectURI = try variable("REDIRECT_URI")
        let keys = JWKSCache(transport: NIOHTTPTransport.shared, jwksURI: URL(string: issuer + "/jwks")!)
        var verifier = LogoutTokenVerifier(issuer: issuer, clientID: clientID, replayStore: InMemoryReplayStore())
        verifier.acceptsGenericType = true
        let endpoint = BackChannelLogoutEndpoint(verifier: verifier, keys: keys)
        let receiver = try LoopbackPostReceiver.start(maximumBodyLength: endpoint.maximumBodyLength)
        defer { receiver.close() }
        let registered = try await GlewlwydAgent.run(
            ["backchannel-uri", clientID, receiver.url(path).absoluteString, "--session-required", sessionRequired ? "true" : "false"])
        try #require(registered.status == 0, "\(registered.errors)")

        let rp = try await RelyingParty.discover(issuer: issuer, clientID: clientID, clientSecret: try secret("LOGOUT_CLIENT_SECRET_FILE"))
        #expect(rp.provider.jwksURI?.absoluteString == issuer + "/jwks")
        let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid"])
        let session = directory.appendingPathComponent("session").path
        let authorized = try await GlewlwydAgent.run(["authorize", try await rp.authorizationURL(for: request).absoluteString, "--session-file", session])
        try #require(authorized.status == 0, "\(authorized.errors)")
        let callback = try #require(authorized.line(startingWith: redirectURI).flatMap(URL.init(string:)))
        let login = StoredLogin(try await rp.completeLogin(callback: callback, for: request))
        try await beforeLogout(login)

        let hint = directory.appendingPathComponent("id-token").path
        let idToken = try #require(login.tokens.idToken?.revealedValue)
        try #require(FileManager.default.createFile(atPath: hint, contents: Data(idToken.utf8), attributes: [.posixPermissions: 0o600]))
        let endSession = ["end-session", "--session-file", session, "--id-token-hint-file", hint]
        let ended = try await GlewlwydAgent.run(endSession)
        try #require(ended.status == 0, "\(ended.errors)")
        #expect(ended.json()["sid"] == login.sessionID)
        let post = try await receiver.next(within: .scaled(.seconds(20)))
        #expect(post.method == "POST" && post.target == path)
        #expect(post.headers["content-type"] == "application/x-www-form-urlencoded")
        try await body(Logout(
            issuer: issuer, clientID: clientID, keys: keys, endpoint: endpoint, receiver: receiver, login: login, post: post, endSession: endSession))
    }

    @Test("a code login keeps glewlwyd's sid; ending the user's glewlwyd session sends a logout token that is verified and deletes that login; the same token again is a replay")
    func providerInitiatedLogout() async throws {
        let directory = try Self.privateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = InMemoryTokenStore()
        let mine = TokenStoreKey(service: "app", account: "alice-browser")
        let other = TokenStoreKey(service: "app", account: "alice-phone")
        try await Self.logInThenOut(sessionRequired: true, in: directory, { login in
            #expect(login.sessionID != nil, "glewlwyd's ID token carries sid where session management is on")
            await store.save(login, for: mine)
            var elsewhere = login
            elsewhere.sessionID = "another-op-session"
            await store.save(elsewhere, for: other)
        }) { logout in
            let sessionID = try #require(logout.login.sessionID)
            let subject = try #require(logout.login.subject)
            let elsewhere = await store.load(other)

            // Its shape, as glewlwyd 2.7.5 sends it.
            let (token, header, claims) = try logout.token()
            #expect(header["typ"] as? String == "JWT" && header["alg"] as? String == "RS256" && header["kid"] is String)
            #expect(Set(claims.keys) == ["iss", "aud", "sub", "iat", "jti", "sid", "events"])
            #expect(claims["iss"] as? String == logout.issuer && claims["aud"] as? String == logout.clientID)
            #expect(claims["sub"] as? String == subject && claims["sid"] as? String == sessionID)
            let events = try #require(claims["events"] as? [String: Any])
            #expect(events.count == 1 && (events[LogoutToken.backChannelLogoutEvent] as? [String: Any])?.isEmpty == true)

            // The default verifier refuses the generic typ; with acceptsGenericType it is accepted.
            let strict = LogoutTokenVerifier(issuer: logout.issuer, clientID: logout.clientID, replayStore: InMemoryReplayStore())
            do throws(LogoutTokenError) {
                _ = try await strict.verify(token, keys: logout.keys)
                Issue.record("the default verifier accepted typ JWT")
            } catch {
                #expect(error.rule == .type)
                #expect(!error.description.contains(token))
            }

            let result = await logout.handle(deletingFrom: store)
            #expect(result.response.status == 200, "\(result.outcome)")
            #expect(result.response.headers["Cache-Control"] == "no-store")
            #expect(result.deletedLogins == 1)
            guard case .logout(let verified) = result.outcome else {
                Issue.record("refused: \(result.outcome)")
                return
            }
            #expect(verified.sessionID == sessionID && verified.subject == subject && verified.issuer == logout.issuer)
            #expect(verified.expiresAt == nil && verified.algorithm == .rs256)
            #expect(await store.load(mine) == nil)
            #expect(elsewhere != nil)
            #expect(await store.load(other) == elsewhere)

            // The same token again (a retry, or someone replaying it): refused, nothing deleted.
            let replay = await logout.endpoint.handle(contentType: logout.post.headers["content-type"], body: logout.post.body, deletingFrom: store)
            #expect(replay.response.status == 400 && replay.deletedLogins == nil)
            guard case .refused(let refusal) = replay.outcome else {
                Issue.record("a replay was accepted")
                return
            }
            #expect(refusal.rule == .replayed)
            #expect(!String(decoding: replay.response.body, as: UTF8.self).contains(token))
            #expect(await store.load(other) == elsewhere)

            // glewlwyd's session is over: there is nothing left to end.
            let again = try await GlewlwydAgent.run(logout.endSession)
            #expect(again.status != 0)
        }
    }

    @Test("with backchannel_logout_session_required false the token names the user alone (no sid): every login of that user at that client is deleted, another user's stays")
    func logoutBySubject() async throws {
        let directory = try Self.privateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = InMemoryTokenStore()
        let keys = ["browser", "phone", "someone-else"].map { TokenStoreKey(service: "app", account: $0) }
        try await Self.logInThenOut(sessionRequired: false, in: directory, { login in
            await store.save(login, for: keys[0])
            var phone = login
            phone.sessionID = "another-op-session"
            await store.save(phone, for: keys[1])
            var someoneElse = login
            someoneElse.subject = "another-user"
            await store.save(someoneElse, for: keys[2])
        }) { logout in
            let (_, _, claims) = try logout.token()
            #expect(Set(claims.keys) == ["iss", "aud", "sub", "iat", "jti", "events"])
            #expect(claims["sub"] as? String == logout.login.subject)
            let result = await logout.handle(deletingFrom: store)
            #expect(result.response.status == 200, "\(result.outcome)")
            #expect(result.deletedLogins == 2)
            if case .logout(let verified) = result.outcome {
                #expect(verified.sessionID == nil && verified.subject == logout.login.subject)
            } else {
                Issue.record("refused: \(result.outcome)")
            }
            #expect(await store.load(keys[0]) == nil)
            #expect(await store.load(keys[1]) == nil)
            #expect(await store.load(keys[2])?.subject == "another-user")
        }
    }
}
