import Foundation
import OIDC
import OIDCTestSupport
import Testing

@testable import OIDCTesting

@Suite("TestBrowser", .timeLimit(.scaledMinutes(1)))
struct TestBrowserTests {
    @Test("reads forms the way a browser submits them: hidden and text fields, the chosen button, no action posts to the page")
    func formsAreRead() {
        let page = """
            <div><form method="post" style="display: contents">
            <input type="text" name="sub" placeholder="sub" required autofocus />
            <input type="checkbox" name="remember"><button type="submit">Authorize</button></form>
            <form method='POST' action="/authorize/confirm?x=1&amp;y=2"><input type=hidden name=request_id value="a&quot;b">
            <button type="submit" name="action" value="sign_in">Sign in</button>
            <button type="submit" name="action" value="cancel">Cancel</button></form>
            <form method="post"><button type="submit" name="action" value="deny">Deny</button></form></div>
            """
        let forms = HTMLForm.forms(in: page)
        #expect(forms.count == 3)
        #expect(forms[0].method == "post")
        #expect(forms[0].action == nil)
        #expect(forms[0].inputs.map(\.name) == ["sub"])
        #expect(forms[0].buttons.first?.label == "Authorize")
        #expect(forms[1].action == "/authorize/confirm?x=1&y=2")
        #expect(forms[1].inputs.first?.value == "a\"b")
        #expect(forms[1].buttons.map(\.isDenial) == [false, true])
        #expect(forms[2].buttons.first?.isDenial == true)
    }

    @Test("signs in at TestProvider's login page and stops at the redirect target's page")
    func signsIn() async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            var request = try AuthorizationRequest(
                authorizationEndpoint: URL(string: provider.authorizationEndpoint)!, clientID: "test-client",
                redirectURI: provider.issuer + "/nothing-here/callback"
            )
            request.nonce = nil
            // The redirect URI is not registered: the provider's error page is a page without a form.
            let refused = try await TestBrowser().open(try request.url())
            #expect(refused.status == 400)
            #expect(refused.history.count == 1)

            request.redirectURI = "http://127.0.0.1:\(provider.port)/callback"
            let visit = try await TestBrowser().open(try request.url())
            // authorize (login page) → POST confirm → 302 to the provider's own port, where /callback is a 404.
            #expect(visit.history.count == 3)
            #expect(visit.history[1].path.hasSuffix("/authorize/confirm"))
            #expect(visit.url.path == "/callback")
            let query = try #require(visit.url.query)
            #expect(query.contains("code="))
            #expect(query.contains("state=\(request.state)"))

            let denied = try await TestBrowser(choice: .deny).open(try request.url())
            #expect(denied.url.query?.contains("error=access_denied") == true)
        }
    }
}

@Suite("TestProvider revocation (RFC 7009)")
struct ProviderRevocationTests {
    @Test("revoking a spent (rotated) refresh token does nothing; revoking the live one ends the family")
    func spentTokenRevocation() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
                let client = TokenClient(provider: try metadata.configuration(), clientID: "test-client", transport: transport)
                let tokens = try await provider.issueTokens()
                let spent = try #require(tokens.refreshToken)
                let live = try #require(try await client.refresh(spent).refreshToken)
                try await client.revoke(spent, hint: .refreshToken)  // 200, and nothing happens
                let next = try #require(try await client.refresh(live).refreshToken)
                try await client.revoke(next, hint: .refreshToken)
                await #expect(throws: OIDCError.self) { try await client.refresh(next) }
            }
        }
    }
}
