import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --fapi2`, run as the built binary against TestProvider with the test browser: a
/// compliant login (pushed, DPoP-bound, private_key_jwt), the profile remembering it, and each
/// refusal with exit 2 before anything is sent.
@Suite("oidc login --fapi2", .timeLimit(.scaledMinutes(2)))
struct FAPI2CommandTests {
    static func setUp() throws -> (TestProvider.Configuration, String) {
        let pem = try ClientCredentialsCommandTests.fixtureKey("ec-p256-sec1.pem")
        let key = try JWSSigningKey(pem: pem, keyID: "cli-key")
        var configuration = TestProvider.Configuration(clients: [
            .privateKeyJWT(id: "fapi-cli", keys: [key], redirectURIs: ["http://127.0.0.1/callback"]), .default,
        ])
        configuration.idTokenAlgorithm = .es256
        configuration.pushedAuthorizationRequests = .offered
        return (configuration, pem)
    }

    @Test("--fapi2 --dpop with private_key_jwt: pushed, only client_id and request_uri in the browser's URL, a DPoP token; remembered; then --no-dpop, --flow device and a public client are refused with exit 2, nothing sent")
    func fapi2Login() async throws {
        let (configuration, pem) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let file = try ClientCredentialsCommandTests.privateFile(sandbox, "key.pem", pem)
            let login = try await sandbox.run([
                "login", "--issuer", provider.issuer, "--client-id", "fapi-cli", "--profile", "bank", "--client-auth", "private_key_jwt",
                "--private-key-file", file, "--key-id", "cli-key", "--fapi2", "--dpop",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
            #expect(await provider.requestParameters(.authorize).first.map { Set($0.keys) } == ["client_id", "request_uri"])
            let stored = try #require(try sandbox.storedLogin("bank"))
            #expect(stored.tokens.tokenType == "DPoP" && stored.dpopKey != nil)
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/bank.json", encoding: .utf8)
            #expect(profile.contains(#""fapi2" : true"#), "\(profile)")

            await provider.resetCounters()
            let bearer = try await sandbox.run(["login", "--profile", "bank", "--no-dpop"])
            #expect(bearer.status == 2, "\(bearer.stderr)")
            #expect(bearer.stderr.contains("FAPI 2.0") && bearer.stderr.contains("sender-constrained"), "\(bearer.stderr)")

            let discoveries = await provider.requestCount(.discovery)
            let device = try await sandbox.run(["login", "--profile", "bank", "--flow", "device"])
            #expect(device.status == 2, "\(device.stderr)")
            #expect(device.stderr.contains("--fapi2") && device.stderr.contains("--flow device"), "\(device.stderr)")
            #expect(await provider.requestCount(.discovery) == discoveries, "refused before discovery")

            let publicClient = try await sandbox.run(LoginCommandTests.loginArguments(provider, profile: "public") + ["--fapi2", "--dpop"])
            #expect(publicClient.status == 2, "\(publicClient.stderr)")
            #expect(publicClient.stderr.contains("client authentication"), "\(publicClient.stderr)")

            #expect(await provider.requestCount(.pushedAuthorization) == 0)
            #expect(await provider.requestCount(.authorize) == 0)
            #expect(await provider.requestCount(.token) == 0)
            #expect(await provider.requestCount(.deviceAuthorization) == 0)
        }
    }
}
