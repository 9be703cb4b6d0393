import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Step-up (RFC 6750 §3.1): a 403 `insufficient_scope` from a session request is a typed error
/// with the scopes asked for, without a refresh or a retry; a login for the union makes it work.
@Suite("Step-up on insufficient_scope", .timeLimit(.scaledMinutes(1)))
struct StepUpTests {
    @Test("the session throws insufficientScope with the scopes, refreshes nothing, and a login for the union gets through")
    func stepUp() async throws {
        try await withTestProvider(ForResourceTests.plainOAuth()) { provider in
            let url = try #require(URL(string: provider.stepUpResourceURL))
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)))
            let login = try await ForResourceTests.login(rp)
            let store = InMemoryTokenStore()
            let key = TokenStoreKey(service: "tests", account: "step-up")
            _ = try await rp.save(login, in: store, as: key)
            let session = rp.session(store: store, key: key, allowlist: .default(for: url))
            await provider.resetCounters()

            let error = await #expect(throws: OIDCError.self) { _ = try await session.send(HTTPRequest(url: url)) }
            #expect(error?.code == .insufficientScope)
            #expect(error?.requiredScopes == ["admin"])
            #expect(error?.context["scope"] == "admin")
            #expect(error?.endsLogin == false)
            #expect(await provider.requestCount(.resource) == 1)
            #expect(await provider.grantCount("refresh_token") == 0)

            let scopes = login.scopes(steppingUpFor: try #require(error))
            #expect(scopes == ["read", "write", "admin"])
            let more = try await ForResourceTests.login(rp, scopes: scopes)
            #expect(more.tokens.scopes == scopes)
            _ = try await rp.save(more, in: store, as: key)
            let stepped = rp.session(store: store, key: key, allowlist: .default(for: url))
            #expect(try await stepped.send(HTTPRequest(url: url)).status == 200)
            // The resource itself still answers with the old route.
            #expect(try await stepped.send(HTTPRequest(url: try #require(URL(string: provider.resourceURL)))).status == 200)
        }
    }
}
