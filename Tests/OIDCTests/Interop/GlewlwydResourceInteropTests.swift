import Foundation
import OIDC
import OIDCTestSupport
import OIDCTesting
import Testing

/// `RelyingParty.forResource` against glewlwyd 2.7.5's `oidc-dcr` issuer (docs/glewlwyd.md,
/// "Registration and resource indicators"): a protected resource of this test on
/// `OIDC_GLEWLWYD_DCR_RESOURCE_URL` whose 401 and RFC 9728 metadata name that issuer; discovery
/// falls back from RFC 8414 (glewlwyd has none) to OpenID discovery, registers (RFC 7591), and a
/// loopback login through the test user agent gets a token whose `aud` is the resource, which a
/// refresh keeps. Needs the `OIDC_GLEWLWYD_*` variables of `scripts/glewlwyd.sh start`.
@Suite(
    "RelyingParty.forResource against glewlwyd", .timeLimit(.scaledMinutes(2)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_DCR_ISSUER"] != nil, "set OIDC_GLEWLWYD_* (scripts/glewlwyd.sh start): its oidc-dcr issuer")
)
struct GlewlwydResourceInteropTests {
    static func variable(_ name: String) throws -> String {
        try #require(ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_" + name], "OIDC_GLEWLWYD_\(name) is not set: export what scripts/glewlwyd.sh start prints")
    }

    /// The test user agent as the browser: it follows the start URL, signs alice in, and sends the
    /// redirect to the listener.
    struct AgentBrowser: BrowserLauncher {
        func open(_ url: URL) async throws(OIDCError) {
            Task.detached { _ = try? await GlewlwydInteropTests.Agent.run(["authorize", url.absoluteString, "--deliver"]) }
        }
    }

    static func audience(_ token: Secret) throws -> String? {
        let parts = token.revealedValue.split(separator: ".")
        let payload = try #require(parts.count == 3 ? Base64URLEncoding.decode(String(parts[1])) : nil)
        return (try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])?["aud"] as? String
    }

    @Test("forResource: OpenID discovery after RFC 8414's 404s, a registration kept in the store, a login whose token's aud is the resource; a refresh keeps it")
    func forResource() async throws {
        let issuer = try Self.variable("DCR_ISSUER"), resource = try Self.variable("DCR_RESOURCE_URL")
        let port = try #require(Int(try Self.variable("DCR_RESOURCE_PORT")))
        let metadataURL = resource + "/.well-known/oauth-protected-resource"
        let document = #"{"resource":"\#(resource)","authorization_servers":["\#(issuer)"],"scopes_supported":["api.read"]}"#
        let service = try await LoopbackHTTPService.start(host: "127.0.0.1", port: port, maximumBodySize: 4096) { request in
            if request.path == "/.well-known/oauth-protected-resource" {
                return .init(status: 200, headers: [("Content-Type", "application/json")], body: Array(document.utf8))
            }
            return .init(status: 401, headers: [("WWW-Authenticate", #"Bearer resource_metadata="\#(metadataURL)""#)])
        }
        do {
            let registrations = InMemoryRegistrationStore()
            let rp = try await RelyingParty.forResource(try #require(URL(string: resource)), registrations: registrations, clientName: "swift-oidc-interop")
            #expect(rp.provider.issuer == issuer)
            let discovered = try #require(rp.protectedResource)
            #expect(discovered.isPlainOAuth == false, "glewlwyd's OpenID discovery names jwks_uri and ID token algorithms")
            #expect(discovered.metadataURL.absoluteString == metadataURL)
            let registration = try #require(discovered.registration)
            #expect(registration.clientSecret == nil && registration.registrationAccessToken != nil)
            #expect(await registrations.registration(for: issuer)?.clientID == registration.clientID)

            var login = rp.loopbackLogin()
            login.browser = AgentBrowser()
            login.timeout = .scaled(.seconds(60))
            let stored = try await login.runLogin()
            #expect(stored.resource == resource && stored.clientID == registration.clientID && stored.issuer == issuer)
            #expect(try Self.audience(stored.tokens.accessToken) == resource)
            let refreshed = try await rp.tokenClient.refresh(try #require(stored.tokens.refreshToken))
            #expect(refreshed.accessToken.revealedValue != stored.tokens.accessToken.revealedValue)
            #expect(try Self.audience(refreshed.accessToken) == resource)
        } catch {
            try await service.shutdown()
            throw error
        }
        try await service.shutdown()
    }
}
