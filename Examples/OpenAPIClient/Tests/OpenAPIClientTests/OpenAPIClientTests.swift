import Foundation
import OIDC
import OIDCTesting
import OpenAPIClient
import OpenAPIRuntime
import Testing

/// The generated client against TestProvider's protected resource (`/api/me`), over loopback HTTP
/// through URLSession: a DPoP-bound login, a nonce the resource demands, a token it refuses.
@Suite("OpenAPIClient: a generated client through the session's pipeline", .timeLimit(.minutes(2)))
struct OpenAPIClientTests {
    static let key = TokenStoreKey(service: "openapi-client-example", account: "user")

    /// A DPoP-bound login at `provider`, kept in a session allowed to reach the provider's host.
    static func session(_ provider: TestProvider) async throws -> AuthenticatedSession {
        let rp = try await provider.relyingParty(configuration: RelyingParty.Configuration(dpop: .on))
        let request = try rp.authorizationRequest(redirectURI: "http://127.0.0.1:9/callback")
        let page = try await rp.transport.send(HTTPRequest(url: try await rp.authorizationURL(for: request)), options: HTTPRequestOptions(followRedirects: false))
        let login = try await rp.completeLogin(callback: try #require(page.headers["Location"].flatMap(URL.init(string:))), for: request)
        let store = InMemoryTokenStore()
        try await rp.save(login, in: store, as: key)
        return rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource))
    }

    @Test("getMe with a DPoP-bound token: the resource's nonce challenge is met once, a refused token is refreshed once, and the operation answers")
    func getMe() async throws {
        var configuration = TestProvider.Configuration()
        configuration.dpop = TestProvider.DPoP(nonces: .required(at: [.protectedResource], rotatingAfter: nil))
        try await withTestProvider(configuration) { provider in
            let session = try await Self.session(provider)
            let api = try #require(URL(string: provider.issuer))
            let subject = await provider.user.subject
            let me = try await currentUser(api: api, session: session)
            #expect(me.sub == subject)
            #expect(await provider.requestCount(.protectedResource) == 2, "one nonce challenge, one retry")

            await provider.expireAccessTokens()
            #expect(try await currentUser(api: api, session: session).sub == subject)
            #expect(await provider.requestCount(.token) == 2, "the login's, then one refresh")
        }
    }

    @Test("a host off the session's allowlist: the generated client's error carries the OIDCError, and nothing was sent")
    func offTheAllowlist() async throws {
        try await withTestProvider { provider in
            let session = try await Self.session(provider)
            let error = await #expect(throws: ClientError.self) {
                _ = try await currentUser(api: URL(string: "https://api.example.net")!, session: session)
            }
            #expect((error?.underlyingError as? OIDCError)?.code == .hostNotAllowed)
            #expect(await provider.requestCount(.protectedResource) == 0)
        }
    }
}
