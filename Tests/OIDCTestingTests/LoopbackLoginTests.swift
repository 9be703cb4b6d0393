import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A whole login with the library alone, as a Swift tool of its own would do it (the README's
/// example): the loopback listener, a browser (here OIDCTesting's TestBrowser), the code exchange
/// and the verified ID token, stored in a FileKeychain.
@Suite("A loopback login with the library alone", .timeLimit(.scaledMinutes(1)))
struct LoopbackLoginTests {
    /// Opens the URL in the background, as a system browser does, and signs in on the provider's page.
    struct BackgroundBrowser: BrowserLauncher {
        func open(_ url: URL) async throws(OIDCError) {
            Task { _ = try await TestBrowser().open(url) }
        }
    }

    @Test("listener → browser → callback → code exchange → verified ID token → FileKeychain")
    func loginWithoutTheCommand() async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage)) { provider in
            try await withNIOHTTPTransport { transport in
                let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
                let configuration = try metadata.configuration()

                let listener = try await LoopbackRedirectListener.start()
                let request = try AuthorizationRequest(
                    provider: configuration, clientID: "test-client", redirectURI: listener.redirectURI, scopes: ["openid", "offline_access"]
                )
                try listener.serve(request)
                try await BackgroundBrowser().open(listener.startURL)
                let response = try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(30)))

                let client = TokenClient(provider: configuration, clientID: "test-client", transport: transport)
                let login = try await client.completeLogin(
                    response, for: request, keys: JWKSCache(transport: transport, jwksURI: try #require(configuration.jwksURI))
                )
                #expect(login.idToken.claims.subject == "test-user")
                #expect(login.idToken.claims.nonce == request.nonce)

                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-loopback-\(UUID().uuidString)")
                let keychain = try FileKeychain(directory: directory)
                let key = TokenStoreKey(service: "my-tool", account: "default")
                try keychain.save(StoredLogin(login), for: key)
                #expect(try keychain.load(key)?.subject == "test-user")
                #expect(await provider.grantCount("authorization_code") == 1)
            }
        }
    }
}
