import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Signed authorization responses (JARM) through the loopback login: the listener verifies the
/// `response` before it looks at the state inside it.
@Suite("JARM: the loopback login", .timeLimit(.scaledMinutes(1)))
struct JARMLoopbackTests {
    typealias Browser = RelyingPartyLoopbackLoginTests.BackgroundBrowser

    static func login(_ provider: TestProvider, timeout: Duration = .scaled(.seconds(20))) async throws -> LoopbackLogin {
        var rp = try await provider.relyingParty()
        rp.responseMode = .jwt
        var login = rp.loopbackLogin()
        login.browser = Browser()
        login.timeout = timeout
        return login
    }

    @Test("a signed callback completes the loopback login, through the sign-in page and through PAR")
    func success() async throws {
        for pushed in [false, true] {
            try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
                var login = try await Self.login(provider)
                if pushed { login.relyingParty.pushedAuthorization = .always }
                let verified = try await login.runLogin()
                #expect(verified.idToken?.claims.subject == "test-user")
                let authorize = await provider.requestParameters(.authorize)
                #expect(pushed ? Set(authorize[0].keys) == ["client_id", "request_uri"] : authorize[0]["response_mode"] == "jwt")
                #expect(await provider.grantCount("authorization_code") == 1)
            }
        }
    }

    @Test("the user cancels: the signed access_denied ends the login with the provider's error")
    func cancelled() async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            var login = try await Self.login(provider)
            login.browser = Browser(choice: .deny)
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin() }
            #expect(error?.providerError?.error == "access_denied")
        }
    }

    @Test("a response that fails its verification is ignored, its page says refused, and the timeout reports the refusal", arguments: [
        (TestProvider.SignedResponseFault.wrongIssuer, OIDCError.Code.issuerMismatch), (.badSignature, .invalidSignature), (.expired, .tokenExpired),
    ])
    func refusedThenTimeout(_ fault: TestProvider.SignedResponseFault, _ code: OIDCError.Code) async throws {
        var configuration = TestProvider.Configuration()
        configuration.signedResponseFault = fault
        try await withTestProvider(configuration) { provider in
            var login = try await Self.login(provider, timeout: .scaled(.seconds(8)))
            let pages = Pages()
            login.browser = PageRecorder(pages: pages)
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin() }
            #expect(error?.code == code, "\(String(describing: error))")
            #expect(error?.message.contains("time limit") == true)
            #expect(pages.statuses == [400])
            #expect(pages.bodies.first?.contains("Sign-in response refused") == true)
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }

    @Test("a plain code with the login's state is a downgrade: the login ends with unsecuredResponse, nothing exchanged")
    func downgrade() async throws {
        var configuration = TestProvider.Configuration()
        configuration.signedResponseFault = .plainCode
        try await withTestProvider(configuration) { provider in
            let login = try await Self.login(provider)
            let error = await #expect(throws: OIDCError.self) { try await login.runLogin() }
            #expect(error?.code == .unsecuredResponse)
            #expect(error?.category == .security)
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }

    @Test("the listener: a JARM request must be served with a verifier; a foreign signed-looking callback is ignored")
    func listener() async throws {
        try await withTestProvider { provider in
            var rp = try await provider.relyingParty()
            rp.responseMode = .jwt
            let listener = try await LoopbackRedirectListener.start()
            let request = try rp.authorizationRequest(redirectURI: listener.redirectURI)
            #expect(throws: OIDCError.self) { try listener.serve(request) }
            let keys = try #require(rp.keys)
            try listener.serve(
                request, redirectingTo: try request.url(), verifier: JARMVerifier(provider: rp.provider, clientID: rp.clientID), keys: keys)
            let foreign = try await rp.transport.send(
                HTTPRequest(url: try #require(URL(string: listener.redirectURI + "?response=a.b.c"))), options: HTTPRequestOptions())
            #expect(foreign.status == 400)
            #expect(String(decoding: foreign.body, as: UTF8.self).contains("refused"))
            let noState = try await rp.transport.send(
                HTTPRequest(url: try #require(URL(string: listener.redirectURI + "?code=x"))), options: HTTPRequestOptions())
            #expect(String(decoding: noState.body, as: UTF8.self).contains("ignored"))
            // The real callback still ends the wait.
            let callback = try await RelyingPartyTests.callback(for: try request.url(), rp.transport)
            Task { _ = try await rp.transport.send(HTTPRequest(url: callback), options: HTTPRequestOptions()) }
            let response = try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(10)))
            #expect(response.state == request.state)
        }
    }

    /// Pages the browser got back from the listener.
    final class Pages: @unchecked Sendable {
        private let lock = NSLock()
        private var visits: [(Int, String)] = []
        func add(_ status: Int, _ body: String) { lock.withLock { visits.append((status, body)) } }
        var statuses: [Int] { lock.withLock { visits.map(\.0) } }
        var bodies: [String] { lock.withLock { visits.map(\.1) } }
    }

    /// Opens the URL in the background and records the listener's page.
    struct PageRecorder: BrowserLauncher {
        let pages: Pages
        func open(_ url: URL) async throws(OIDCError) {
            let pages = self.pages
            Task {
                let visit = try await TestBrowser().open(url)
                pages.add(visit.status, visit.body)
            }
        }
    }
}
