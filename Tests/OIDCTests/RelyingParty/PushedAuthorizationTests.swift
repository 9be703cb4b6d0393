import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Pushed authorization requests (RFC 9126) behind `RelyingParty.authorizationURL(for:)`, over real
/// loopback HTTP against TestProvider.
@Suite("Pushed authorization requests", .timeLimit(.scaledMinutes(1)))
struct PushedAuthorizationTests {
    static let redirectURI = "http://127.0.0.1:9/callback"

    static func configuration(_ mode: TestProvider.PushedAuthorizationRequests, clients: [TestProvider.Client] = [.default]) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: clients)
        configuration.pushedAuthorizationRequests = mode
        return configuration
    }

    /// The query of `url` by name (each name once).
    static func query(_ url: URL) throws -> [String: String] {
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        return Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
    }

    @Test("required by the provider: authorizationURL pushes by itself; the URL and the provider's authorize request carry only client_id and request_uri; the login completes")
    func requiredIsUsedByItself() async throws {
        try await withTestProvider(Self.configuration(.required)) { provider in
            let rp = try await provider.relyingParty()
            #expect(rp.provider.requiresPushedAuthorizationRequests)
            #expect(rp.provider.pushedAuthorizationRequestEndpoint?.absoluteString == provider.issuer + "/par")
            #expect(rp.pushedAuthorization == .whenRequired && rp.pushesAuthorizationRequests)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.loginHint = "alice" }
            let url = try await rp.authorizationURL(for: request)

            let query = try Self.query(url)
            #expect(Set(query.keys) == ["client_id", "request_uri"])
            #expect(query["client_id"] == "test-client")
            #expect(query["request_uri"]?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
            #expect(url.absoluteString.hasPrefix(provider.authorizationEndpoint + "?"))
            // The push carried every parameter of the request, the PKCE challenge among them.
            let pushed = try #require(await provider.requestParameters(.pushedAuthorization).first)
            #expect(pushed["client_id"] == "test-client" && pushed["state"] == request.state && pushed["nonce"] == request.nonce)
            #expect(pushed["code_challenge"] == request.pkce?.challenge && pushed["login_hint"] == "alice")
            #expect(pushed["redirect_uri"] == Self.redirectURI && pushed["response_type"] == "code")

            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.idToken.claims.nonce == request.nonce)
            let authorize = await provider.requestParameters(.authorize)
            #expect(authorize.count == 1 && Set(authorize[0].keys) == ["client_id", "request_uri"], "\(authorize)")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
        }
    }

    @Test("a request URI is good once: the same URL again gets an error page; every call of authorizationURL pushes anew")
    func singleUse() async throws {
        try await withTestProvider(Self.configuration(.required)) { provider in
            let rp = try await provider.relyingParty()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            _ = try await RelyingPartyTests.callback(for: url, rp.transport)
            let again = try await rp.transport.send(HTTPRequest(url: url), options: HTTPRequestOptions(followRedirects: false))
            #expect(again.status == 400)
            #expect(String(decoding: again.body, as: UTF8.self).contains("invalid_request_uri"))

            let second = try await rp.authorizationURL(for: request)
            #expect(try Self.query(second)["request_uri"] != Self.query(url)["request_uri"])
            #expect(await provider.requestCount(.pushedAuthorization) == 2)
            // Without a push, a provider that requires it shows an error page.
            let plain = try await rp.transport.send(HTTPRequest(url: try request.url()), options: HTTPRequestOptions(followRedirects: false))
            #expect(plain.status == 400)
        }
    }

    @Test("offered but not required: the URL carries the parameters unless the relying party says always; then a confidential client pushes with its authentication")
    func offeredOnRequest() async throws {
        let client = TestProvider.Client.confidential(id: "server", secret: "s3cret-value", redirectURIs: [Self.redirectURI])
        try await withTestProvider(Self.configuration(.offered, clients: [client])) { provider in
            var rp = try await provider.relyingParty(client: client)
            #expect(!rp.provider.requiresPushedAuthorizationRequests && !rp.pushesAuthorizationRequests)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let plain = try await rp.authorizationURL(for: request)
            #expect(try Self.query(plain)["state"] == request.state)
            #expect(await provider.requestCount(.pushedAuthorization) == 0)

            rp.pushedAuthorization = .always
            let url = try await rp.authorizationURL(for: request)
            #expect(Set(try Self.query(url).keys) == ["client_id", "request_uri"])
            let pushed = try #require(await provider.requestParameters(.pushedAuthorization).first)
            #expect(pushed["client_id"] == "server" && pushed["client_secret"] == nil)  // Basic, with client_id in the form too
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.clientID == "server")
        }
    }

    @Test("always, at a provider without a pushed authorization request endpoint: refused before anything is sent, naming the endpoint")
    func alwaysWithoutEndpoint() async throws {
        try await withTestProvider(Self.configuration(.notOffered)) { provider in
            var rp = try await provider.relyingParty()
            #expect(rp.provider.pushedAuthorizationRequestEndpoint == nil)
            rp.pushedAuthorization = .always
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            await provider.resetCounters()
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("pushed_authorization_request_endpoint") == true)
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
        }
    }

    @Test("the provider refuses the push (an unregistered redirect URI): its error, nothing else; a wrong secret is invalid_client")
    func refusedPush() async throws {
        let client = TestProvider.Client.confidential(id: "server", secret: "s3cret-value", redirectURIs: [Self.redirectURI])
        try await withTestProvider(Self.configuration(.required, clients: [client])) { provider in
            let rp = try await provider.relyingParty(client: client)
            let request = try rp.authorizationRequest(redirectURI: "http://127.0.0.1:9/elsewhere")
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .providerError && error?.providerError?.error == "invalid_request", "\(String(describing: error))")

            let wrong = try await provider.relyingParty(client: client, authentication: .clientSecretBasic(Secret("not-it")))
            let refused = await #expect(throws: OIDCError.self) {
                try await wrong.authorizationURL(for: try wrong.authorizationRequest(redirectURI: Self.redirectURI))
            }
            #expect(refused?.providerError?.error == "invalid_client")
            #expect(refused?.message.contains("not-it") == false)
        }
    }

    @Test("the answer is checked: 201 with a request_uri and a whole positive expires_in; a 200, a missing request_uri or expires_in is malformedResponse")
    func answerChecks() throws {
        let good = try PushedAuthorization(json: Array(#"{"request_uri":"urn:x","expires_in":60}"#.utf8), now: Date(timeIntervalSince1970: 0))
        #expect(good.requestURI == "urn:x" && good.expiresIn == 60 && good.expiresAt == Date(timeIntervalSince1970: 60))
        for body in [
            #"{"expires_in":60}"#, #"{"request_uri":"","expires_in":60}"#, #"{"request_uri":"urn:x"}"#,
            #"{"request_uri":"urn:x","expires_in":"60"}"#, #"{"request_uri":"urn:x","expires_in":0}"#, #"{"request_uri":"urn:x","expires_in":1.5}"#,
            #"{"request_uri":7,"expires_in":60}"#, "[]", "",
        ] {
            #expect(throws: OIDCError.self, "\(body)") { try PushedAuthorization(json: Array(body.utf8)) }
        }
    }

    /// The real transport, except that the pushed authorization request endpoint's answers come
    /// back with another status (a provider that answers 200 where RFC 9126 says 201).
    final class StatusRewriter: HTTPTransport {
        let status: Int
        init(status: Int) { self.status = status }
        func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            let response = try await NIOHTTPTransport.shared.send(request, options: options)
            guard request.url.path.hasSuffix("/par") else { return response }
            return HTTPResponse(status: status, headers: response.headers, body: response.body)
        }
    }

    @Test("a valid answer with 200 instead of 201 from the push endpoint is refused as malformed")
    func twoHundredIsRefused() async throws {
        try await withTestProvider(Self.configuration(.required)) { provider in
            let rp = try await provider.relyingParty(transport: StatusRewriter(status: 200))
            let error = await #expect(throws: OIDCError.self) {
                try await rp.authorizationURL(for: try rp.authorizationRequest(redirectURI: Self.redirectURI))
            }
            #expect(error?.code == .malformedResponse && error?.context["status"] == "200", "\(String(describing: error))")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)  // the provider did take it (201, rewritten)
        }
    }

    @Test("private_key_jwt (the FAPI way) and client_secret_post: the push carries the client's assertion or secret, and the login completes")
    func assertionAndPostAuthentication() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "server-key")
        let jwtClient = TestProvider.Client.privateKeyJWT(id: "fapi-server", keys: [key], redirectURIs: [Self.redirectURI])
        let postClient = TestProvider.Client.confidential(id: "post-server", secret: "p0st-secret", authentication: .clientSecretPost, redirectURIs: [Self.redirectURI])
        try await withTestProvider(Self.configuration(.required, clients: [jwtClient, postClient])) { provider in
            let rp = try await provider.relyingParty(client: jwtClient, authentication: .privateKeyJWT(key))
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let pushed = try #require(await provider.requestParameters(.pushedAuthorization).last)
            #expect(pushed["client_id"] == "fapi-server")
            #expect(pushed["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" && pushed["client_assertion"] != nil)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.clientID == "fapi-server")

            let post = try await provider.relyingParty(client: postClient)
            let postRequest = try post.authorizationRequest(redirectURI: Self.redirectURI)
            let postURL = try await post.authorizationURL(for: postRequest)
            let posted = try #require(await provider.requestParameters(.pushedAuthorization).last)
            #expect(posted["client_id"] == "post-server" && posted["client_secret"] == "p0st-secret")
            _ = try await post.completeLogin(callback: try await RelyingPartyTests.callback(for: postURL, post.transport), for: postRequest)
        }
    }

    @Test("a request URI is the pushing client's, and expires: another client's client_id gets an error page and leaves it usable; after its lifetime it is refused")
    func bindingAndExpiry() async throws {
        let other = TestProvider.Client(id: "other-client", redirectURIs: [Self.redirectURI])
        try await withTestProvider(Self.configuration(.required, clients: [.default, other])) { provider in
            let rp = try await provider.relyingParty()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let uri = try #require(try Self.query(url)["request_uri"])
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.queryItems = [URLQueryItem(name: "client_id", value: "other-client"), URLQueryItem(name: "request_uri", value: uri)]
            let stolen = try await rp.transport.send(HTTPRequest(url: try #require(components.url)), options: HTTPRequestOptions(followRedirects: false))
            #expect(stolen.status == 400)
            // Still the pushing client's, and still unused.
            _ = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)

            let late = try await rp.authorizationURL(for: request)
            await provider.advanceClock(by: 61)  // the provider keeps a pushed request 60 s
            let expired = try await rp.transport.send(HTTPRequest(url: late), options: HTTPRequestOptions(followRedirects: false))
            #expect(expired.status == 400)
            #expect(String(decoding: expired.body, as: UTF8.self).contains("invalid_request_uri"))
        }
    }

    @Test("a request of another client, or with an authorization endpoint that is not https, is refused before anything is pushed")
    func checkedBeforeThePush() async throws {
        try await withTestProvider(Self.configuration(.required)) { provider in
            let rp = try await provider.relyingParty()
            let foreign = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.clientID = "someone-else" }
            let mismatch = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: foreign) }
            #expect(mismatch?.code == .invalidArgument && mismatch?.message.contains("someone-else") == true)
            let insecure = try rp.authorizationRequest(redirectURI: Self.redirectURI) {
                $0.authorizationEndpoint = URL(string: "http://login.example.com/authorize")!
            }
            let refused = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: insecure) }
            #expect(refused?.code == .insecureEndpoint)
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
        }
    }

    @Test("discovery: the endpoint and the flag are read; a flag that is not a boolean is malformed; a preset merged with metadata that requires pushed requests requires them")
    func metadata() throws {
        func document(_ extra: String) -> [UInt8] {
            Array(#"{"issuer":"https://id.example","authorization_endpoint":"https://id.example/a","token_endpoint":"https://id.example/t","jwks_uri":"https://id.example/k","response_types_supported":["code"]\#(extra)}"#.utf8)
        }
        let required = try ProviderMetadata(document: document(#","pushed_authorization_request_endpoint":"https://id.example/par","require_pushed_authorization_requests":true"#), expectedIssuer: "https://id.example")
        #expect(required.pushedAuthorizationRequestEndpoint?.absoluteString == "https://id.example/par" && required.advertised.requirePushedAuthorizationRequests)
        let configuration = try required.configuration()
        #expect(configuration.requiresPushedAuthorizationRequests && configuration.pushedAuthorizationRequestEndpoint != nil)
        #expect(try !ProviderMetadata(document: document(""), expectedIssuer: "https://id.example").advertised.requirePushedAuthorizationRequests)
        #expect(throws: OIDCError.self) { try ProviderMetadata(document: document(#","require_pushed_authorization_requests":"yes""#), expectedIssuer: "https://id.example") }
        #expect(throws: OIDCError.self) { try ProviderMetadata(document: document(#","pushed_authorization_request_endpoint":"http://id.example/par""#), expectedIssuer: "https://id.example") }

        let preset = ProviderConfiguration(issuer: "https://id.example", authorizationEndpoint: URL(string: "https://id.example/a"))
        let merged = preset.merging(required)
        #expect(merged.requiresPushedAuthorizationRequests && merged.pushedAuthorizationRequestEndpoint == required.pushedAuthorizationRequestEndpoint)
    }

    @Test("a loopback login whose start URL is opened after the request URI expired: the request was pushed again in time, and the login completes")
    func loopbackRenewsBeforeExpiry() async throws {
        var configuration = Self.configuration(.required)
        // 12 s: renewed at 10 s (a quarter before would be 9 s, under the 10 s floor), 2 s before it expires.
        configuration.pushedRequestLifetime = 12
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty()
            var login = rp.loopbackLogin()
            login.browser = nil
            login.timeout = .seconds(25)  // without the renewal, the provider's error page leaves the login waiting
            // The renewal waits on this clock, moved with the provider's: no wall-clock wait.
            let time = ManualLoginClock()
            login.clock = time.clock
            let shown = Shown()
            let opener = Task {
                // A user who opens the link late: after the first renewal (at 10 s), when the first
                // request URI has expired (at 12 s).
                await time.sleepsStarted(1)
                await provider.advanceClock(by: 10)
                time.advance(by: 10)
                await time.sleepsStarted(2)  // renewed: the start URL leads to the new request URI
                await provider.advanceClock(by: 3)
                return try await Self.signIn(at: shown)
            }
            let verified = try await login.runLogin { url in Task { await shown.set(url) } }
            #expect(try await opener.value)
            #expect(verified.clientID == "test-client")
            let pushes = await provider.requestCount(.pushedAuthorization)
            #expect(pushes >= 2, "pushed \(pushes) times")
            let authorize = await provider.requestParameters(.authorize)
            #expect(authorize.count == 1 && Set(authorize[0].keys) == ["client_id", "request_uri"], "\(authorize)")
        }
    }

    /// The start URL the login showed.
    actor Shown {
        var url: URL?
        func set(_ url: URL) { self.url = url }
    }

    /// Opens the shown start URL as a browser would, once it is known.
    static func signIn(at shown: Shown) async throws -> Bool {
        for _ in 0..<TestTime.scaled(100) {
            if let url = await shown.url {
                _ = try await TestBrowser().open(url)
                return true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("request_uri among the additional parameters is refused before the push")
    func requestURIParameterRefused() async throws {
        try await withTestProvider(Self.configuration(.required)) { provider in
            let rp = try await provider.relyingParty()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.additionalParameters = [OAuthParameter("request_uri", "urn:mine")] }
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .reservedParameter)
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
        }
    }

    @Test("a loopback login at a provider that requires pushed requests: the browser is sent to a request_uri URL and the login completes")
    func loopbackLogin() async throws {
        try await withTestProvider(Self.configuration(.required)) { provider in
            let rp = try await provider.relyingParty()
            var login = rp.loopbackLogin()
            login.browser = RelyingPartyLoopbackLoginTests.BackgroundBrowser()
            let verified = try await login.runLogin { _ in }
            #expect(verified.clientID == "test-client")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
            let authorize = await provider.requestParameters(.authorize)
            #expect(authorize.count == 1 && Set(authorize[0].keys) == ["client_id", "request_uri"], "\(authorize)")
        }
    }
}
