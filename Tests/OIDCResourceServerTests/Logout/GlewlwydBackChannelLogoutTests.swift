import Foundation
import OIDC
import OIDCResourceServer
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
/// such providers; its default refusal is checked too.
@Suite(
    "Back-channel logout from glewlwyd", .timeLimit(.minutes(2)), .serialized,
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

    @Test("a code login keeps glewlwyd's sid; ending the user's glewlwyd session sends a logout token that is verified and deletes that login; the same token again is a replay")
    func providerInitiatedLogout() async throws {
        let issuer = try Self.variable("LOGOUT_ISSUER")
        let clientID = try Self.variable("LOGOUT_CLIENT_ID")
        let redirectURI = try Self.variable("REDIRECT_URI")
        let directory = try Self.privateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let keys = JWKSCache(transport: NIOHTTPTransport.shared, jwksURI: URL(string: issuer + "/jwks")!)
        var verifier = LogoutTokenVerifier(issuer: issuer, clientID: clientID, replayStore: InMemoryReplayStore())
        verifier.acceptsGenericType = true
        let endpoint = BackChannelLogoutEndpoint(verifier: verifier, keys: keys)
        let receiver = try LoopbackPostReceiver.start(maximumBodyLength: endpoint.maximumBodyLength)
        defer { receiver.close() }
        let registered = try await GlewlwydAgent.run(["backchannel-uri", clientID, receiver.url(Self.path).absoluteString])
        #expect(registered.status == 0, "\(registered.errors)")

        // A real code login (PKCE, nonce) through the agent, which keeps the user's glewlwyd session.
        let rp = try await RelyingParty.discover(issuer: issuer, clientID: clientID, clientSecret: try Self.secret("LOGOUT_CLIENT_SECRET_FILE"))
        #expect(rp.provider.jwksURI?.absoluteString == issuer + "/jwks")
        let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid"])
        let session = directory.appendingPathComponent("session").path
        let authorized = try await GlewlwydAgent.run(["authorize", try await rp.authorizationURL(for: request).absoluteString, "--session-file", session])
        #expect(authorized.status == 0, "\(authorized.errors)")
        let callback = try #require(authorized.line(startingWith: redirectURI).flatMap(URL.init(string:)))
        let login = StoredLogin(try await rp.completeLogin(callback: callback, for: request))
        let sessionID = try #require(login.sessionID, "glewlwyd's ID token carries sid where session management is on")
        let subject = try #require(login.subject)

        let store = InMemoryTokenStore()
        let mine = TokenStoreKey(service: "app", account: "alice-browser")
        await store.save(login, for: mine)
        var elsewhere = login
        elsewhere.sessionID = "another-op-session"
        let other = TokenStoreKey(service: "app", account: "alice-phone")
        await store.save(elsewhere, for: other)

        // The user logs out at glewlwyd: the logout token arrives at the listener.
        let hint = directory.appendingPathComponent("id-token").path
        let idToken = try #require(login.tokens.idToken?.revealedValue)
        #expect(FileManager.default.createFile(atPath: hint, contents: Data(idToken.utf8), attributes: [.posixPermissions: 0o600]))
        let ended = try await GlewlwydAgent.run(["end-session", "--session-file", session, "--id-token-hint-file", hint])
        #expect(ended.status == 0, "\(ended.errors)")
        #expect(ended.json()["sid"] == sessionID)
        let post = try await receiver.next(within: .seconds(20))
        #expect(post.method == "POST" && post.target == Self.path)
        #expect(post.headers["content-type"] == "application/x-www-form-urlencoded")

        // Its shape, as glewlwyd 2.7.5 sends it.
        let form = try #require(URLComponents(string: "?" + String(decoding: post.body, as: UTF8.self))?.queryItems)
        let token = try #require(form.first { $0.name == "logout_token" }?.value)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try Self.segment(parts[0])
        #expect(header["typ"] as? String == "JWT" && header["alg"] as? String == "RS256" && header["kid"] is String)
        let claims = try Self.segment(parts[1])
        #expect(Set(claims.keys) == ["iss", "aud", "sub", "iat", "jti", "sid", "events"])
        #expect(claims["iss"] as? String == issuer && claims["aud"] as? String == clientID)
        #expect(claims["sub"] as? String == subject && claims["sid"] as? String == sessionID)
        let events = try #require(claims["events"] as? [String: Any])
        #expect(events.count == 1 && (events[LogoutToken.backChannelLogoutEvent] as? [String: Any])?.isEmpty == true)

        // The default verifier refuses the generic typ; with acceptsGenericType it is accepted.
        let strict = LogoutTokenVerifier(issuer: issuer, clientID: clientID, replayStore: InMemoryReplayStore())
        do {
            _ = try await strict.verify(token, keys: keys)
            Issue.record("the default verifier accepted typ JWT")
        } catch {
            #expect(error.rule == .type)
            #expect(!error.description.contains(token))
        }

        let result = await endpoint.handle(contentType: post.headers["content-type"], body: post.body, deletingFrom: store)
        await receiver.respond(to: post, status: result.response.status, headers: result.response.headers, body: result.response.body)
        #expect(result.response.status == 200, "\(result.outcome)")
        #expect(result.response.headers["Cache-Control"] == "no-store")
        #expect(result.deletedLogins == 1)
        guard case .logout(let verified) = result.outcome else {
            Issue.record("refused: \(result.outcome)")
            return
        }
        #expect(verified.sessionID == sessionID && verified.subject == subject && verified.issuer == issuer)
        #expect(verified.expiresAt == nil && verified.algorithm == .rs256)
        #expect(await store.load(mine) == nil)
        #expect(await store.load(other) == elsewhere)

        // The same token again (a retry, or someone replaying it): refused, nothing deleted.
        let replay = await endpoint.handle(contentType: post.headers["content-type"], body: post.body, deletingFrom: store)
        #expect(replay.response.status == 400 && replay.deletedLogins == nil)
        guard case .refused(let refusal) = replay.outcome else {
            Issue.record("a replay was accepted")
            return
        }
        #expect(refusal.rule == .replayed)
        #expect(!String(decoding: replay.response.body, as: UTF8.self).contains(token))
        #expect(await store.load(other) == elsewhere)

        // glewlwyd's session is over: there is nothing left to end.
        let again = try await GlewlwydAgent.run(["end-session", "--session-file", session, "--id-token-hint-file", hint])
        #expect(again.status != 0)
    }
}
