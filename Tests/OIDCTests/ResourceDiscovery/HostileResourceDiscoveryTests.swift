import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Security review 5, L1, L3 and I2: what a hostile resource (or its authorization server) names
/// is held to rules before any request goes there; against a small hostile server over loopback
/// and the test provider over TLS.
@Suite("A relying party from a hostile resource: issuer text, local services, the client configuration endpoint", .timeLimit(.scaledMinutes(2)))
struct HostileResourceDiscoveryTests {
    static let certificates = Task { try await TestCertificates.make() }
    static let escape = "\u{1B}]0;owned-title\u{07}\u{1B}[2J\u{1B}[1;32mverified by your IT department\u{1B}[0m"

    /// Sends through `base` (which trusts the test authority), then lets the test change the answer.
    struct Rewriting: HTTPTransport {
        let base: any HTTPTransport
        let rewrite: @Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse
        func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
            rewrite(request, try await base.send(request, options: options))
        }
    }

    static func forResource(_ url: String, registrations: any RegistrationStore = InMemoryRegistrationStore()) async throws -> RelyingParty {
        try await RelyingParty.forResource(try #require(URL(string: url)), registrations: registrations)
    }

    /// The error of `body`, which must throw one.
    static func refusal(_ body: () async throws -> Void) async -> OIDCError? {
        await #expect(throws: OIDCError.self) { try await body() }
    }

    @Test("L1: an issuer with control characters (ESC, DEL, a C1 control, a space) in authorization_servers is refused by its code point, before any request goes to it")
    func issuerOutsidePrintableASCII() async throws {
        for (text, code) in [(Self.escape, "U+001B"), ("x\u{7F}", "U+007F"), ("x\u{9B}31m", "U+009B"), ("a b", "U+0020")] {
            var script = HostileResource.Script()
            script.authorizationServers = ["http://127.0.0.1:9/" + text]
            try await HostileResource.with(script) { server in
                let error = await Self.refusal { _ = try await Self.forResource(server.resourceURL) }
                #expect(error?.code == .malformedResponse)
                #expect(error?.message.contains(code) == true, "\(error?.message ?? "")")
                #expect(error?.context["rule"] == "RFC 8414 §2 issuer printable ASCII")
                let shown = error.map { $0.description + $0.context.values.joined() } ?? ""
                #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(shown)")
                #expect(server.requests == ["GET /mcp", "GET /.well-known/oauth-protected-resource/mcp"])
            }
        }
    }

    @Test("L1: a registration answer whose client_id holds an escape sequence is refused by its code point (RFC 6749 A.1 VSCHAR); nothing is kept")
    func clientIDOutsideVSCHAR() async throws {
        var script = HostileResource.Script()
        script.clientID = "cid\u{1B}]52;c;Y3VybCBldmlsLmV4YW1wbGUvc2ggfCBzaAo=\u{07}"
        try await HostileResource.with(script) { server in
            let store = InMemoryRegistrationStore()
            let error = await Self.refusal { _ = try await Self.forResource(server.resourceURL, registrations: store) }
            #expect(error?.code == .malformedResponse)
            #expect(error?.message.contains("client_id") == true && error?.message.contains("U+001B") == true, "\(error?.message ?? "")")
            #expect(error?.description.contains("\u{1B}") == false)
            #expect(error?.description.contains("Y3Vy") == false)
            #expect(try await store.registration(for: server.origin) == nil)
            #expect(server.requests.last == "POST /register")
        }
        // A space is VSCHAR: taken.
        script.clientID = "client with spaces"
        try await HostileResource.with(script) { server in
            let rp = try await Self.forResource(server.resourceURL)
            #expect(rp.clientID == "client with spaces")
        }
    }

    @Test("L3: an https resource naming a plain-http loopback issuer is refused; nothing reaches that local service")
    func httpsResourceNamesLocalService() async throws {
        let certificates = try await Self.certificates.value
        try await HostileResource.with(HostileResource.Script()) { local in
            var configuration = TestProvider.Configuration(tls: certificates.serverTLS)
            configuration.registration = TestProvider.Registration()
            configuration.protectedResource.authorizationServers = ["\(local.origin)/admin"]
            try await withTestProvider(configuration) { provider in
                #expect(provider.resourceURL.hasPrefix("https://"))
                let trust = NIOHTTPTransport.Configuration(trustsSystemRoots: false, additionalTrustRootsPEM: [certificates.authority.certificatePEM])
                try await withNIOHTTPTransport(configuration: trust) { transport in
                    let error = await Self.refusal {
                        _ = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)), transport: transport)
                    }
                    #expect(error?.code == .insecureEndpoint)
                    #expect(error?.context["rule"] == "authorization_servers https")
                    #expect(error?.message.contains("\(local.origin)/admin") == true, "\(error?.message ?? "")")
                }
                #expect(await provider.requestCount(.registration) == 0)
            }
            #expect(local.requests.isEmpty, "\(local.requests)")
        }
    }

    @Test("L3: a plain-http loopback resource may name a plain-http issuer at its own host (another port), not at another host")
    func loopbackResourceHosts() async throws {
        var configuration = TestProvider.Configuration()
        configuration.registration = TestProvider.Registration()
        try await withTestProvider(configuration) { provider in
            var script = HostileResource.Script()
            script.authorizationServers = [provider.issuer]
            try await HostileResource.with(script) { server in
                let rp = try await Self.forResource(server.resourceURL)
                #expect(rp.provider.issuer == provider.issuer)
            }
            script.authorizationServers = [provider.issuer.replacingOccurrences(of: "127.0.0.1", with: "localhost")]
            try await HostileResource.with(script) { server in
                let error = await Self.refusal { _ = try await Self.forResource(server.resourceURL) }
                #expect(error?.code == .insecureEndpoint)
                #expect(server.requests.count == 2)
            }
            #expect(await provider.registrationCount() == 1)
        }
    }

    @Test("L3: metadata of an https server naming a plain-http registration endpoint is refused; nothing reaches it")
    func httpsServerPlainEndpoint() async throws {
        let certificates = try await Self.certificates.value
        try await HostileResource.with(HostileResource.Script()) { local in
            var configuration = TestProvider.Configuration(tls: certificates.serverTLS)
            configuration.registration = TestProvider.Registration()
            try await withTestProvider(configuration) { provider in
                let trust = NIOHTTPTransport.Configuration(trustsSystemRoots: false, additionalTrustRootsPEM: [certificates.authority.certificatePEM])
                try await withNIOHTTPTransport(configuration: trust) { base in
                    let transport = Rewriting(base: base) { request, response in
                        guard request.url.path.hasPrefix("/.well-known/oauth-authorization-server") else { return response }
                        var object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
                        object["registration_endpoint"] = local.origin + "/register"
                        var changed = response
                        changed.body = Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
                        return changed
                    }
                    let error = await Self.refusal {
                        _ = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)), transport: transport)
                    }
                    #expect(error?.code == .insecureEndpoint)
                    #expect(error?.context["member"] == "registration_endpoint")
                }
                #expect(await provider.requestCount(.registration) == 0)
            }
            #expect(local.requests.isEmpty, "\(local.requests)")
        }
    }

    @Test("I2: a registration_client_uri on another origin is left out (no RFC 7592 read goes there), also one kept earlier; on the registration endpoint's origin it is kept and read")
    func registrationClientURIOrigin() async throws {
        try await HostileResource.with(HostileResource.Script()) { elsewhere in
            var script = HostileResource.Script()
            script.registrationClientURI = "\(elsewhere.origin)/elsewhere/regclient"
            try await HostileResource.with(script) { server in
                let store = InMemoryRegistrationStore()
                _ = try await Self.forResource(server.resourceURL, registrations: store)
                let kept = try #require(try await store.registration(for: server.origin))
                #expect(kept.registrationClientURI == nil)
                let again = try await Self.forResource(server.resourceURL, registrations: store)
                #expect(again.protectedResource?.clientSource == .storedRegistration)
                _ = try await again.confirmingKeptRegistration(registrations: store)
                // A registration kept by an earlier version, which took any origin: not read there either.
                var older = kept
                older.registrationClientURI = URL(string: "\(elsewhere.origin)/elsewhere/regclient")
                older.registrationAccessToken = Secret("older-registration-access-token")
                try await store.save(older)
                let fromOlder = try await Self.forResource(server.resourceURL, registrations: store)
                #expect(fromOlder.protectedResource?.registration?.registrationClientURI == nil)
                _ = try await fromOlder.confirmingKeptRegistration(registrations: store)
            }
            #expect(elsewhere.requests.isEmpty, "\(elsewhere.requests)")
        }
        var script = HostileResource.Script()
        script.registrationClientURI = "{origin}/register/hostile-client"
        try await HostileResource.with(script) { server in
            let store = InMemoryRegistrationStore()
            _ = try await Self.forResource(server.resourceURL, registrations: store)
            #expect(try await store.registration(for: server.origin)?.registrationClientURI?.absoluteString == "\(server.origin)/register/hostile-client")
            let again = try await Self.forResource(server.resourceURL, registrations: store)
            _ = try await again.confirmingKeptRegistration(registrations: store)
            #expect(server.requests.contains("GET /register/hostile-client"), "\(server.requests)")
        }
    }
}
