import Foundation
@testable import OIDC
import OIDCTesting
import Testing

/// `ResourceCredential`: a session's login for another HTTP client's requests. The same value as
/// each attempt of `send` carries; against TestProvider over loopback HTTP.
@Suite("ResourceCredential: the session's credential for another HTTP client", .timeLimit(.minutes(1)))
struct ResourceCredentialTests {
    static func response(_ status: Int, _ fields: String...) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders(fields.map { ("WWW-Authenticate", $0) }))
    }

    static let url = URL(string: "http://127.0.0.1:9420/mcp")!

    @Test("step-up scopes after a 403 insufficient_scope: those granted, then those asked for, each once (the MCP Python SDK's challenge, behind another scheme, a DPoP one)")
    func stepUpUnion() {
        let python = #"Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="http://127.0.0.1:9420/.well-known/oauth-protected-resource/mcp", error_description="the tool needs mcp:tools mcp:admin""#
        let granted = ResourceCredential(accessToken: Secret("t"), proofs: nil, scopes: ["mcp:tools"], allowlist: .default(for: Self.url))
        #expect(granted.stepUpScopes(after: Self.response(403, python), from: Self.url) == ["mcp:tools", "mcp:admin"])
        let more = ResourceCredential(accessToken: Secret("t"), proofs: nil, scopes: ["openid", "mcp:tools"], allowlist: .default(for: Self.url))
        #expect(more.stepUpScopes(after: Self.response(403, "Negotiate", python), from: Self.url) == ["openid", "mcp:tools", "mcp:admin"])
        let none = ResourceCredential(accessToken: Secret("t"), proofs: nil, scopes: [], allowlist: .default(for: Self.url))
        #expect(none.stepUpScopes(after: Self.response(403, #"DPoP algs="ES256", error="insufficient_scope", scope="a""#), from: Self.url) == ["a"])
    }

    @Test("no step-up: a 401, another error, no Bearer or DPoP challenge; a bearer credential is never nonce-challenged; no token in its description")
    func noStepUp() throws {
        let credential = ResourceCredential(accessToken: Secret("secret-access-token"), proofs: nil, scopes: ["a"], allowlist: .default(for: Self.url))
        #expect(credential.stepUpScopes(after: Self.response(401, #"Bearer error="insufficient_scope", scope="a""#), from: Self.url) == nil)
        #expect(credential.stepUpScopes(after: Self.response(403, #"Bearer error="invalid_token""#), from: Self.url) == nil)
        #expect(credential.stepUpScopes(after: Self.response(403, #"Basic realm="x""#), from: Self.url) == nil)
        #expect(credential.stepUpScopes(after: Self.response(403), from: Self.url) == nil)
        #expect(!credential.nonceChallenged(Self.response(401, #"DPoP error="use_dpop_nonce""#), from: Self.url))
        #expect(try !credential.isDPoPBound && credential.headers(method: "GET", url: Self.url)["DPoP"] == nil)
        var dumped = ""
        dump(credential, to: &dumped)
        #expect(!"\(credential)".contains("secret-access-token") && !dumped.contains("secret-access-token"))
    }

    @Test("a DPoP-bound login: Authorization DPoP and a fresh proof per request; the resource's nonce challenge recorded and answered by the next headers; a refusal refreshes once for two callers; off the allowlist nothing is read")
    func dpopAgainstTestProvider() async throws {
        var configuration = TestProvider.Configuration()
        configuration.dpop = TestProvider.DPoP(nonces: .required(at: [.protectedResource], rotatingAfter: nil))
        try await withTestProvider(configuration) { provider in
            let rp = try await DPoPTests.dpopRelyingParty(provider)
            let (_, login) = try await DPoPTests.login(rp)
            let session = try await rp.keep(login, in: InMemoryTokenStore(), as: TokenStoreKey(service: "credential-tests", account: "user"), allowlist: .default(for: provider.protectedResource))
            let url = provider.protectedResource
            let credential = try await session.credential(for: url)
            #expect(credential.isDPoPBound)
            #expect(credential.scopes == login.tokens.scopes)

            func get(_ credential: ResourceCredential) async throws -> HTTPResponse {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: url, headers: try credential.headers(method: "GET", url: url)))
            }
            let first = try await get(credential)
            #expect(first.status == 401)
            #expect(credential.nonceChallenged(first, from: url))
            let second = try await get(credential)
            #expect(second.status == 200, "the next headers carry the nonce")
            let proofs = await provider.dpopProofs(.protectedResource)
            #expect(proofs.map(\.error) == ["use_dpop_nonce", nil] && Set(proofs.map(\.compact)).count == 2)
            #expect(try credential.headers(method: "GET", url: url)["Authorization"]?.hasPrefix("DPoP ") == true)
            // The token and its proof go only where the session's allowlist lets them.
            let elsewhere = #expect(throws: OIDCError.self) { try credential.headers(method: "GET", url: URL(string: "https://api.example.net/")!) }
            #expect(elsewhere?.code == .hostNotAllowed)
            // A DPoP credential, after its key has hashed the token for a proof: no token in what it prints.
            var dumped = ""
            dump(credential, to: &dumped)
            let token = credential.accessToken.revealedValue
            #expect(!dumped.contains(token) && !"\(credential)".contains(token) && !String(reflecting: credential).contains(token))

            // The resource refuses the token: two callers that saw it, one refresh.
            await provider.expireAccessTokens()
            let refused = try await get(credential)
            #expect(refused.status == 401 && !credential.nonceChallenged(refused, from: url))
            async let a = session.credential(afterRefusalOf: credential, at: url)
            async let b = session.credential(afterRefusalOf: credential, at: url)
            let (fresh, other) = try await (a, b)
            #expect(await provider.grantCount("refresh_token") == 1)
            #expect(fresh.accessToken == other.accessToken && fresh.accessToken != credential.accessToken)
            #expect(try await get(fresh).status == 200)

            let offList = await #expect(throws: OIDCError.self) { _ = try await session.credential(for: URL(string: "https://api.example.net/")!) }
            #expect(offList?.code == .hostNotAllowed)
        }
    }
}
