import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The issue's "Bad input" against the test provider: each refused with a typed error naming its
/// rule, before any registration or token request is sent.
@Suite("A relying party from a resource's URL: refusals", .timeLimit(.scaledMinutes(1)))
struct ForResourceRefusalTests {
    /// Sends through the shared transport, then lets a test change the answer; records every URL.
    final class RewritingTransport: HTTPTransport, @unchecked Sendable {
        let rewrite: @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse
        private let lock = NSLock()
        private var sent: [String] = []
        init(_ rewrite: @escaping @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse) { self.rewrite = rewrite }
        func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            lock.withLock { sent.append(request.url.absoluteString) }
            return rewrite(request, try await NIOHTTPTransport.shared.send(request, options: options))
        }
        var urls: [String] { lock.withLock { sent } }
    }

    static func configuration(_ change: (inout TestProvider.Configuration) -> Void = { _ in }) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.registration = TestProvider.Registration()
        change(&configuration)
        return configuration
    }

    /// `forResource` at the provider's resource, expected to fail; the error, after checking that
    /// nothing reached the registration or token endpoints.
    static func refusal(
        _ provider: TestProvider, transport: any HTTPTransport = NIOHTTPTransport.shared, authorizationServer: String? = nil
    ) async throws -> OIDCError? {
        let store = InMemoryRegistrationStore()
        let error = await #expect(throws: OIDCError.self) {
            _ = try await RelyingParty.forResource(
                try #require(URL(string: provider.resourceURL)), authorizationServer: authorizationServer, registrations: store,
                transport: transport)
        }
        #expect(await provider.requestCount(.registration) == 0)
        #expect(await provider.requestCount(.token) == 0)
        #expect(try await store.registration(for: provider.issuer) == nil)
        #expect(error?.context["rule"] != nil)
        return error
    }

    @Test("a document naming another resource (a trailing slash added) is refused")
    func resourceMismatch() async throws {
        let port = try freePort()
        try await withTestProvider(Self.configuration {
            $0.port = port
            $0.protectedResource.advertisedResource = "http://127.0.0.1:\(port)/resource/"
        }) { provider in
            let error = try await Self.refusal(provider)
            #expect(error?.code == .resourceMismatch)
            #expect(error?.category == .security)
            #expect(error?.context["found"] == "http://127.0.0.1:\(port)/resource/")
        }
    }

    @Test("a document without authorization servers, or without the one asked for, is refused")
    func authorizationServers() async throws {
        try await withTestProvider(Self.configuration { $0.protectedResource.authorizationServers = [] }) { provider in
            let error = try await Self.refusal(provider)
            #expect(error?.code == .noAuthorizationServer)
        }
        try await withTestProvider(Self.configuration()) { provider in
            let error = try await Self.refusal(provider, authorizationServer: "https://other.example")
            #expect(error?.code == .resourceMismatch)
        }
    }

    @Test("an authorization server without PKCE S256 is refused")
    func withoutPKCE() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let transport = RewritingTransport { request, response in
                guard request.url.path.hasPrefix("/.well-known/oauth-authorization-server") else { return response }
                var object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
                object["code_challenge_methods_supported"] = ["plain"]
                var changed = response
                changed.body = Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
                return changed
            }
            let error = try await Self.refusal(provider, transport: transport)
            #expect(error?.code == .pkceNotSupported)
        }
    }

    @Test("a resource_metadata on another origin over plain http is refused before it is fetched: another host, or another loopback port", arguments: [
        "http://metadata.example/.well-known/oauth-protected-resource", "http://127.0.0.1:1/.well-known/oauth-protected-resource/resource",
        "http://localhost/.well-known/oauth-protected-resource",
    ])
    func plainHTTPMetadataElsewhere(_ metadataURL: String) async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let transport = RewritingTransport { request, response in
                guard request.url.path == "/resource" else { return response }
                var headers = HTTPHeaders()
                headers.add("WWW-Authenticate", #"Bearer resource_metadata="\#(metadataURL)""#)
                return HTTPResponse(status: 401, headers: headers)
            }
            let error = try await Self.refusal(provider, transport: transport)
            #expect(error?.code == .insecureEndpoint)
            #expect(transport.urls == [provider.resourceURL])
        }
    }

    @Test("a registration answer without client_id is refused, and nothing is kept")
    func registrationWithoutClientID() async throws {
        try await withTestProvider(Self.configuration { $0.metadataDocuments = .oauthOnly }) { provider in
            let transport = RewritingTransport { request, response in
                guard request.url.path == "/register" else { return response }
                return HTTPResponse(status: 201, headers: ["Content-Type": "application/json"], body: Array(#"{"client_secret":"s3cret-value"}"#.utf8))
            }
            let store = InMemoryRegistrationStore()
            let error = await #expect(throws: OIDCError.self) {
                _ = try await RelyingParty.forResource(
                    try #require(URL(string: provider.resourceURL)), registrations: store, transport: transport)
            }
            #expect(error?.code == .malformedResponse)
            #expect(error?.context["rule"] == "RFC 7591 §3.2.1 client_id")
            #expect(error?.description.contains("s3cret-value") == false)
            #expect(try await store.registration(for: provider.issuer) == nil)
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("no client id and no registration endpoint is refused")
    func noRegistration() async throws {
        try await withTestProvider { provider in
            let error = try await Self.refusal(provider)
            #expect(error?.code == .missingParameter)
        }
    }
}
