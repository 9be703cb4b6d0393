import Foundation
import HTTPTypes
import OIDC
import OIDCOpenAPI
import OIDCTesting
import OpenAPIRuntime
import Synchronization
import Testing

/// What an OpenAPI-generated client's transport does, over real loopback HTTP: joins the base URL
/// and the path, sends through a plain `NIOHTTPTransport` (not the session's), and notes each request.
private final class LoopbackClientTransport: Sendable {
    struct Seen: Sendable {
        var url: String
        var authorization: String?
        var proof: String?
        var status: Int
        var body: String
    }

    private let seen = Mutex<[Seen]>([])
    var requests: [Seen] { seen.withLock { $0 } }

    @Sendable func send(_ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let url = try #require(URL(string: baseURL.absoluteString + (request.path ?? "")))
        let bytes = body == nil ? [] : Array(try await ArraySlice<UInt8>(collecting: body!, upTo: 1 << 20))
        var headers = OIDC.HTTPHeaders()
        for field in request.headerFields { headers.add(field.name.rawName, field.value) }
        let answer = try await NIOHTTPTransport.shared.send(OIDC.HTTPRequest(method: request.method.rawValue, url: url, headers: headers, body: bytes))
        seen.withLock {
            $0.append(Seen(url: url.absoluteString, authorization: headers["Authorization"], proof: headers["DPoP"], status: answer.status, body: String(decoding: bytes, as: UTF8.self)))
        }
        var fields = HTTPFields()
        for (name, value) in answer.headers { if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) } }
        return (HTTPTypes.HTTPResponse(status: .init(code: answer.status), headerFields: fields), HTTPBody(answer.body))
    }
}

private struct TransportDown: Error {}

@Suite("OIDCOpenAPI: an OpenAPI client's requests through the session's resource pipeline", .timeLimit(.minutes(2)))
struct SessionMiddlewareTests {
    static let redirectURI = "http://127.0.0.1:9/callback"
    static let key = TokenStoreKey(service: "openapi-middleware", account: "user")

    /// A DPoP-bound login at `provider` (the code flow, its page answering without a person), kept in a session.
    static func dpopSession(_ provider: TestProvider) async throws -> AuthenticatedSession {
        let rp = try await provider.relyingParty(client: .default, configuration: RelyingParty.Configuration(dpop: .on))
        let request = try rp.authorizationRequest(redirectURI: redirectURI)
        let page = try await rp.transport.send(HTTPRequest(url: try await rp.authorizationURL(for: request)), options: HTTPRequestOptions(followRedirects: false))
        let callback = try #require(page.headers["Location"].flatMap(URL.init(string:)))
        let login = try await rp.completeLogin(callback: callback, for: request)
        let store = InMemoryTokenStore()
        try await rp.save(login, in: store, as: key)
        return rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource))
    }

    static func configuration() -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: [TestProvider.Client.default])
        configuration.dpop = TestProvider.DPoP(nonces: .required(at: [.protectedResource], rotatingAfter: nil))
        // The step-up route takes the login's token, issued without a resource indicator.
        configuration.protectedResource.requiresAudience = false
        return configuration
    }

    /// `url` as the runtime hands it to a middleware: the server URL, and the operation's path.
    static func split(_ url: URL) throws -> (URL, HTTPTypes.HTTPRequest) {
        let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        let base = try #require(URL(string: "\(components.scheme!)://\(components.host!):\(components.port!)"))
        return (base, HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: components.percentEncodedPath))
    }

    @Test("a DPoP-bound login: the nonce challenge retried once with a fresh proof, then a refused token refreshed once; each attempt leaves through the client's transport with Authorization: DPoP and a proof; the answer's body streams back")
    func dpopNonceAndRefresh() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let session = try await Self.dpopSession(provider)
            let transport = LoopbackClientTransport()
            let middleware = SessionMiddleware(session: session)
            let (base, request) = try Self.split(provider.protectedResource)

            let (response, body) = try await middleware.intercept(request, body: nil, baseURL: base, operationID: "getMe", next: transport.send)
            #expect(response.status == .ok)
            let text = String(decoding: try await ArraySlice<UInt8>(collecting: try #require(body), upTo: 1 << 20), as: UTF8.self)
            #expect(text.contains("\"sub\""), "\(text)")
            #expect(transport.requests.map(\.status) == [401, 200], "the first attempt meets the nonce challenge")
            #expect(transport.requests.allSatisfy { $0.url == provider.protectedResource.absoluteString && $0.authorization?.hasPrefix("DPoP ") == true && $0.proof != nil })
            #expect(Set(transport.requests.compactMap(\.proof)).count == 2, "a fresh proof for the retry")
            #expect(await provider.requestCount(.token) == 1, "no refresh for a nonce")

            // The token expires at the provider: one 401, one refresh, one retry with the new token.
            let before = try await session.validTokens().accessToken
            await provider.expireAccessTokens()
            let (again, _) = try await middleware.intercept(request, body: nil, baseURL: base, operationID: "getMe", next: transport.send)
            #expect(again.status == .ok)
            #expect(transport.requests.dropFirst(2).map(\.status) == [401, 200])
            #expect(await provider.requestCount(.token) == 2)
            #expect(try await session.validTokens().accessToken != before)
        }
    }

    @Test("a body is sent again on the retry; a base URL with a path joins the operation's path; a body over the limit is refused before anything is sent")
    func bodies() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let session = try await Self.dpopSession(provider)
            let transport = LoopbackClientTransport()
            let (origin, _) = try Self.split(provider.protectedResource)
            let base = origin.appendingPathComponent("api")
            let post = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/me", headerFields: [.contentType: "application/json"])
            let (response, _) = try await SessionMiddleware(session: session).intercept(
                post, body: HTTPBody("{\"order\":1}"), baseURL: base, operationID: "postMe", next: transport.send)
            #expect(transport.requests.map(\.url) == [provider.protectedResource.absoluteString, provider.protectedResource.absoluteString])
            #expect(transport.requests.map(\.body) == ["{\"order\":1}", "{\"order\":1}"], "the nonce retry sends the body again")
            #expect(transport.requests.count == 2 && response.status.code != 401)

            let small = SessionMiddleware(session: session, maximumRequestBodySize: 4)
            let error = await #expect(throws: OIDCError.self) {
                _ = try await small.intercept(post, body: HTTPBody("{\"order\":1}"), baseURL: base, operationID: "postMe", next: transport.send)
            }
            #expect(error?.code == .invalidArgument)
            #expect(transport.requests.count == 2, "nothing sent")
        }
    }

    @Test("a host off the session's allowlist gets no token and no request; a 403 insufficient_scope is the step-up error; the transport's own error reaches the caller as it threw it")
    func refusals() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let session = try await Self.dpopSession(provider)
            let transport = LoopbackClientTransport()
            let middleware = SessionMiddleware(session: session)
            let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/me")

            let offList = await #expect(throws: OIDCError.self) {
                _ = try await middleware.intercept(request, body: nil, baseURL: URL(string: "https://api.example.net")!, operationID: "getMe", next: transport.send)
            }
            #expect(offList?.code == .hostNotAllowed)
            #expect(transport.requests.isEmpty)

            let (base, stepUp) = try Self.split(try #require(URL(string: provider.stepUpResourceURL)))
            let scope = await #expect(throws: OIDCError.self) {
                _ = try await middleware.intercept(stepUp, body: nil, baseURL: base, operationID: "admin", next: transport.send)
            }
            #expect(scope?.code == .insufficientScope, "\(String(describing: scope))")
            #expect(transport.requests.last?.status == 403)

            let down: @Sendable (HTTPTypes.HTTPRequest, HTTPBody?, URL) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) = { _, _, _ in throw TransportDown() }
            await #expect(throws: TransportDown.self) {
                _ = try await middleware.intercept(stepUp, body: nil, baseURL: base, operationID: "admin", next: down)
            }
        }
    }
}
