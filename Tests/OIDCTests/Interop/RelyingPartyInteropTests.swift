import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The facade against a provider we did not write: oidc-provider-mock (Flask + Authlib), started by
/// `make test` with `--require-registration` (docs/interop.md). A confidential client registered for
/// each test; the provider's sign-in form filled in by OIDCTesting's TestBrowser.
@Suite(
    "RelyingParty with oidc-provider-mock", .timeLimit(.scaledMinutes(1)),
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_INTEROP_ISSUER"] != nil, "set OIDC_INTEROP_ISSUER (make test does)")
)
struct RelyingPartyInteropTests {
    static let issuer = ProcessInfo.processInfo.environment["OIDC_INTEROP_ISSUER"] ?? ""

    /// Opens the URL in the background and signs in on the provider's form as `sub`.
    struct FormBrowser: BrowserLauncher {
        let sub: String
        func open(_ url: URL) async throws(OIDCError) {
            let browser = TestBrowser(formValues: ["sub": sub])
            Task { _ = try await browser.open(url) }
        }
    }

    /// A relying party of a confidential client registered for `redirectURI` (RFC 7591).
    static func relyingParty(redirectURI: String) async throws -> RelyingParty {
        let bare = try await RelyingParty.discover(issuer: issuer, clientID: "unregistered")
        let endpoint = try #require(try await ProviderDiscovery(transport: bare.transport).metadata(for: issuer).registrationEndpoint)
        let body = #"{"redirect_uris":["\#(redirectURI)"],"token_endpoint_auth_method":"client_secret_basic"}"#
        let response = try await bare.transport.send(
            HTTPRequest(method: "POST", url: endpoint, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        )
        #expect(response.status == 201)
        let object = try StrictJSON.parseObject(response.body)
        return try await RelyingParty.discover(
            issuer: issuer, clientID: try #require(object["client_id"]?.stringValue),
            clientSecret: Secret(try #require(object["client_secret"]?.stringValue))
        )
    }

    @Test("a server's code flow: discover, request, URL, the provider's form, completeLogin(callback:), keep, session refresh")
    func codeFlow() async throws {
        let redirectURI = "http://127.0.0.1:8766/callback"
        let rp = try await Self.relyingParty(redirectURI: redirectURI)
        #expect(rp.provider.clientAuthentication == .clientSecretBasic)
        #expect(rp.keys != nil)
        let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["email", "offline_access"])
        #expect(request.scopes == ["openid", "email", "offline_access"])
        // The provider's sign-in form posts to the authorization URL itself.
        let signIn = try await rp.transport.send(
            HTTPRequest(
                method: "POST", url: try await rp.authorizationURL(for: request), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("sub=bob%40example.com".utf8)
            )
        )
        let callback = try #require(signIn.headers["Location"].flatMap(URL.init(string:)))
        let forged = await #expect(throws: OIDCError.self) {
            try await rp.completeLogin(callback: URL(string: redirectURI + "?code=x&state=forged")!, for: request)
        }
        #expect(forged?.code == .stateMismatch)
        let login = try await rp.completeLogin(callback: callback, for: request)
        #expect(login.idToken.claims.subject == "bob@example.com")
        #expect(login.issuer == Self.issuer)

        let store = InMemoryTokenStore()
        let key = TokenStoreKey(service: "interop", account: "bob")
        let userinfo = try #require(rp.provider.userinfoEndpoint)
        let session = try await rp.keep(login, in: store, as: key, allowlist: .default(for: userinfo))
        #expect(try await session.send(HTTPRequest(url: userinfo)).status == 200)
        let refreshed = try await session.refreshNow()  // client_secret_basic, at the provider's token endpoint
        #expect(refreshed.accessToken != login.tokens.accessToken)
        #expect(try await rp.session(store: store, key: key, allowlist: .default(for: userinfo)).send(HTTPRequest(url: userinfo)).status == 200)
    }

    /// The callback the provider's sign-in form sends for `body` (`sub=…`, or `action=deny`).
    static func callback(_ rp: RelyingParty, _ request: AuthorizationRequest, body: String) async throws -> URL {
        let answer = try await rp.transport.send(
            HTTPRequest(
                method: "POST", url: try await rp.authorizationURL(for: request), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array(body.utf8)
            )
        )
        return try #require(answer.headers["Location"].flatMap(URL.init(string:)))
    }

    @Test("failure paths: a denied sign-in, a provider without usable keys, and a refresh the provider refuses, which ends the login")
    func failurePaths() async throws {
        let redirectURI = "http://127.0.0.1:8767/callback"
        let rp = try await Self.relyingParty(redirectURI: redirectURI)

        // Denied: the mock sends access_denied without the state (RFC 6749 §4.1.2.1 wants it echoed),
        // so the callback cannot be tied to this login and is refused before its error is believed.
        let request = try rp.authorizationRequest(redirectURI: redirectURI)
        let denied = await #expect(throws: OIDCError.self) {
            try await rp.completeLogin(callback: try await Self.callback(rp, request, body: "action=deny"), for: request)
        }
        #expect(denied?.category == .security && denied?.endsLogin == false, "\(String(describing: denied))")

        // No jwks_uri: the code is never exchanged, since its ID token could not be verified.
        var keyless = rp.provider
        keyless.jwksURI = nil
        let blind = RelyingParty(provider: keyless, clientID: rp.clientID, authentication: rp.tokenClient.authentication)
        let second = try blind.authorizationRequest(redirectURI: redirectURI)
        let code = try await Self.callback(blind, second, body: "sub=dave%40example.com")
        let noKeys = await #expect(throws: OIDCError.self) { try await blind.completeLogin(callback: code, for: second) }
        #expect(noKeys?.code == .missingParameter && noKeys?.message.contains("jwks_uri") == true, "\(String(describing: noKeys))")
        // The same code still works with keys: it was not spent (here through an already checked response).
        let response = try AuthorizationResponse(callbackURL: code, request: second)
        #expect(try await rp.completeLogin(response, for: second).idToken.claims.subject == "dave@example.com")

        // A refresh refused (the provider revoked the user's tokens): invalid_grant ends the login.
        let third = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["offline_access"])
        let login = try await rp.completeLogin(callback: try await Self.callback(rp, third, body: "sub=erin%40example.com"), for: third)
        let store = InMemoryTokenStore()
        let key = TokenStoreKey(service: "interop", account: "erin")
        let session = try await rp.keep(login, in: store, as: key, allowlist: .default(for: try #require(rp.provider.userinfoEndpoint)))
        let revoke = try await rp.transport.send(HTTPRequest(method: "POST", url: try #require(URL(string: Self.issuer + "/users/erin%40example.com/revoke-tokens"))))
        #expect(revoke.status == 204)
        let refused = try await #require(throws: OIDCError.self) { try await session.refreshNow() }
        let refusal = refused.providerError?.error
        #expect(refused.endsLogin, "\(refused)")
        #expect(refusal == "invalid_grant", "\(refused)")
        #expect(await store.load(key) == nil)
    }

    @Test("a loopback login: the listener on the registered port, the provider's form filled in, the ID token verified")
    func loopbackLogin() async throws {
        let port = try freePort()
        let rp = try await Self.relyingParty(redirectURI: "http://127.0.0.1:\(port)/callback")
        var login = rp.loopbackLogin(scopes: ["openid", "email"])
        login.listener = LoopbackRedirectListener.Configuration(endpoints: [try .init(parsing: "127.0.0.1:\(port)")])
        login.browser = FormBrowser(sub: "carol@example.com")
        login.timeout = .scaled(.seconds(30))
        let verified = try await login.runLogin()
        #expect(verified.idToken?.claims.subject == "carol@example.com")
        #expect(verified.clientID == rp.clientID)
    }
}
