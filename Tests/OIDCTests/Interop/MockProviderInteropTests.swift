import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// Interoperability with a provider we did not write: oidc-provider-mock (Flask + Authlib) from
/// PyPI, started by `make test` (scripts/mock-provider.sh, with `--require-registration`) and named
/// by `OIDC_INTEROP_ISSUER`. See docs/interop.md for its recipe and quirks; behaviours it lacks (PKCE
/// enforcement, refresh-token rotation, `iss` in the callback, revocation) are proven against
/// TestProvider instead.
@Suite(
    "Interop with oidc-provider-mock", .timeLimit(.scaledMinutes(1)),
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_INTEROP_ISSUER"] != nil, "set OIDC_INTEROP_ISSUER (make test does)")
)
struct MockProviderInteropTests {
    static let issuer = ProcessInfo.processInfo.environment["OIDC_INTEROP_ISSUER"] ?? ""
    static let redirectURI = "http://127.0.0.1:8765/callback"

    /// Registers a confidential client (RFC 7591); the provider chooses its id and secret.
    static func register(_ transport: NIOHTTPTransport, at endpoint: URL) async throws -> (id: String, secret: String) {
        let body = #"{"redirect_uris":["\#(redirectURI)"],"token_endpoint_auth_method":"client_secret_basic"}"#
        let response = try await transport.send(
            HTTPRequest(method: "POST", url: endpoint, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        )
        #expect(response.status == 201)
        let object = try StrictJSON.parseObject(response.body)
        return (try #require(object["client_id"]?.stringValue), try #require(object["client_secret"]?.stringValue))
    }

    @Test("discovery, a code flow with PKCE as a user agent drives it, ID-token verification, userinfo and refresh")
    func codeFlow() async throws {
        let transport = NIOHTTPTransport()
        defer { Task { try? await transport.shutdown() } }
        let metadata = try await ProviderDiscovery(transport: transport).metadata(for: Self.issuer)
        #expect(metadata.issuer == Self.issuer)
        #expect(!metadata.advertised.authorizationResponseIssParameterSupported)
        let registration = try #require(metadata.registrationEndpoint)
        let client = try await Self.register(transport, at: registration)

        let configuration = try metadata.configuration(confidential: true)
        #expect(configuration.clientAuthentication == .clientSecretBasic)
        var request = try AuthorizationRequest(
            provider: configuration, clientID: client.id, redirectURI: Self.redirectURI, scopes: ["openid", "profile", "email", "offline_access"]
        )
        request.state = "state with space+plus"  // comes back form-encoded: the callback parser must decode it
        // The provider's login page is a form whose POST goes to the authorization URL itself.
        let signIn = try await transport.send(
            HTTPRequest(
                method: "POST", url: try request.url(), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("sub=alice%40example.com".utf8)
            )
        )
        #expect(signIn.status == 302)
        let location = try #require(signIn.headers["Location"].flatMap(URL.init(string:)))
        guard case .authorized(let response) = try request.handleRedirect(location) else {
            Issue.record("not an authorization response: \(location)")
            return
        }
        #expect(response.issuer == nil)  // no RFC 9207 iss from this provider

        let tokens = TokenClient(provider: configuration, clientID: client.id, clientSecret: Secret(client.secret), transport: transport)
        let keys = JWKSCache(transport: transport, jwksURI: try #require(metadata.jwksURI))
        let login = try await tokens.completeLogin(response, for: request, keys: keys)
        #expect(login.idToken.keyID == nil)  // its tokens carry no kid: the single key is chosen
        #expect(login.idToken.algorithm == .rs256)
        #expect(login.idToken.claims.subject == "alice@example.com")
        #expect(login.idToken.claims.audience == [client.id])  // an array with one audience, no azp
        #expect(login.idToken.claims.nonce == request.nonce)

        let claims = try await tokens.userinfo(accessToken: login.tokens.accessToken, expectedSubject: login.idToken.claims.subject)
        #expect(claims["email"] == .string("alice@example.com"))

        let refreshed = login.tokens.refreshed(with: try await tokens.refresh(try #require(login.tokens.refreshToken)))
        #expect(refreshed.refreshToken == login.tokens.refreshToken)  // no rotation: the old one is kept
        #expect(refreshed.accessToken != login.tokens.accessToken)
        _ = try await tokens.userinfo(accessToken: refreshed.accessToken, expectedSubject: "alice@example.com")

        // A wrong secret is refused with the provider's own invalid_client.
        let wrong = TokenClient(provider: configuration, clientID: client.id, clientSecret: Secret("not-the-secret"), transport: transport)
        let error = await #expect(throws: OIDCError.self) { try await wrong.refresh(try #require(login.tokens.refreshToken)) }
        #expect(error?.providerError?.error == "invalid_client")
        #expect(error?.category == .provider)
    }
}
