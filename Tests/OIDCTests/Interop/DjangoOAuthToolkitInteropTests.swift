import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Interoperability with django-oauth-toolkit 3.4.1 (PyPI, on Django and oauthlib), an OpenID
/// provider in Python we did not write, started by `scripts/dot-provider.sh start` and named by the
/// `OIDC_DOT_*` variables it prints. Its device authorization grant (RFC 8628) answers `openid`
/// with an access token and a refresh token but no ID token, which RFC 8628 allows: the login is
/// kept without a subject. Its discovery document names no device authorization endpoint; the
/// script's variables do. The user approves with `scripts/dot-agent.py`.
@Suite(
    "Interop with django-oauth-toolkit", .timeLimit(.scaledMinutes(2)), .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_DOT_ISSUER"] != nil, "set OIDC_DOT_ISSUER (scripts/dot-provider.sh start prints it)")
)
struct DjangoOAuthToolkitInteropTests {
    static let environment = ProcessInfo.processInfo.environment
    static let issuer = environment["OIDC_DOT_ISSUER"] ?? ""
    /// The checkout, for `scripts/dot-agent.py`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// An `OIDC_DOT_*` variable that `scripts/dot-provider.sh start` exports.
    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_DOT_" + name], "OIDC_DOT_\(name) is not set: export what scripts/dot-provider.sh start prints")
    }

    /// The provider as discovered, with the device authorization endpoint its discovery document lacks.
    static func relyingParty() async throws -> RelyingParty {
        var provider = try await RelyingParty.discover(issuer: issuer, clientID: try variable("CLIENT_ID")).provider
        #expect(provider.deviceAuthorizationEndpoint == nil)
        provider.deviceAuthorizationEndpoint = URL(string: try variable("DEVICE_AUTHORIZATION_ENDPOINT"))
        return RelyingParty(provider: provider, clientID: try variable("CLIENT_ID"))
    }

    @Test("a device login for openid: no ID token comes; waitForLogin keeps the login without a subject; userinfo takes its token; a refresh renews it")
    func deviceLoginWithoutIDToken() async throws {
        let rp = try await Self.relyingParty()
        let login = try await rp.deviceLogin(scopes: ["openid"])
        // The user approves first (the codes wait for the first poll), so a failed approval never
        // leaves the test polling until the codes expire.
        let agent = try await Agent.run([try #require(login.verificationURIComplete).absoluteString])
        try #require(agent.status == 0 && agent.output.contains("accepted"), "\(agent.output)")
        let stored = try await login.waitForLogin()
        #expect(stored.tokens.idToken == nil && stored.subject == nil)
        #expect(stored.tokens.scopes.contains("openid") && stored.tokens.refreshToken != nil)

        let store = InMemoryTokenStore()
        let key = TokenStoreKey(service: "dot", account: "alice")
        let userinfo = try #require(rp.provider.userinfoEndpoint)
        let session = try await rp.keep(stored, in: store, as: key, allowlist: .default(for: userinfo))
        let answer = try await session.send(HTTPRequest(url: userinfo))
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(try StrictJSON.parseObject(answer.body)["sub"] != nil)

        let refreshed = try await session.refreshNow()
        #expect(refreshed.accessToken != stored.tokens.accessToken)
        let kept = try #require(await store.load(key))
        #expect(kept.tokens.accessToken == refreshed.accessToken && kept.subject == nil)
        #expect(try await session.send(HTTPRequest(url: userinfo)).status == 200)
    }

    @Test("waitForTokens at the same provider: the error says the device grant sent no ID token, not that openid is missing")
    func waitForTokensSaysWhy() async throws {
        let login = try await Self.relyingParty().deviceLogin(scopes: ["openid"])
        let agent = try await Agent.run([try #require(login.verificationURIComplete).absoluteString])
        try #require(agent.status == 0, "\(agent.output)")
        let error = await #expect(throws: OIDCError.self) { try await login.waitForTokens() }
        #expect(error?.code == .missingParameter)
        #expect(error?.message.contains("device grant sent no ID token") == true, "\(String(describing: error))")
        #expect(error?.message.contains("'openid' scope") == false)
    }

    /// `scripts/dot-agent.py`, the test user's browser.
    enum Agent {
        static func run(_ arguments: [String]) async throws -> TestAgent.Result { try await TestAgent.run("dot-agent.py", arguments) }
    }
}
