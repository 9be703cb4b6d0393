import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --par` (RFC 9126), run as the built binary against TestProvider with the test browser.
@Suite("oidc login --par", .timeLimit(.scaledMinutes(2)))
struct PushedAuthorizationCommandTests {
    static func provider(_ mode: TestProvider.PushedAuthorizationRequests) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.pushedAuthorizationRequests = mode
        return configuration
    }

    /// The query parameter names of each GET of `/authorize`.
    static func authorizeNames(_ provider: TestProvider) async -> [Set<String>] {
        await provider.requestParameters(.authorize).map { Set($0.keys) }
    }

    @Test("--par pushes the request and the browser gets only client_id and request_uri; remembered by the profile; --no-par stops it")
    func parRemembered() async throws {
        try await withTestProvider(Self.provider(.offered)) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--par"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
            #expect(await Self.authorizeNames(provider) == [["client_id", "request_uri"]])
            #expect(try sandbox.storedLogin("work")?.subject == "test-user")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8)
            #expect(profile.contains(#""par" : true"#), "\(profile)")

            let again = try await sandbox.run(["login", "--profile", "work"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 2)

            let plain = try await sandbox.run(["login", "--profile", "work", "--no-par"])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 2)
            let names = await Self.authorizeNames(provider)
            #expect(names.last?.contains("code_challenge") == true && names.last?.contains("request_uri") == false, "\(names)")
            #expect(try !String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8).contains(#""par""#))
        }
    }

    @Test("a provider that requires pushed requests gets them without --par, and even with --no-par")
    func requiredWithoutFlag() async throws {
        try await withTestProvider(Self.provider(.required)) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--no-par"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
            #expect(await Self.authorizeNames(provider) == [["client_id", "request_uri"]])
        }
    }

    @Test("--par at a provider without a pushed authorization request endpoint: exit 2 before the browser opens, naming the endpoint")
    func parWithoutEndpoint() async throws {
        try await withTestProvider(Self.provider(.notOffered)) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--par"])
            #expect(login.status == 2, "\(login.stderr)")
            #expect(login.stderr.contains("pushed_authorization_request_endpoint"), "\(login.stderr)")
            #expect(await provider.requestCount(.authorize) == 0)
            #expect(try sandbox.storedLogin("work") == nil)
        }
    }

    @Test("a push the provider refuses (an unknown client: invalid_client) exits 4 with the provider's error; the browser never opens")
    func refusedPush() async throws {
        try await withTestProvider(Self.provider(.required)) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "nobody-knows-me", "--profile", "work"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains("invalid_client"), "\(login.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
            #expect(await provider.requestCount(.authorize) == 0)
        }
    }

    @Test("--request-object signs the request with the --private-key-file key (RFC 9101), pushed with --par; remembered; a provider that requires objects, without a key: exit 2 before anything is sent")
    func requestObject() async throws {
        let pem = try ClientCredentialsCommandTests.fixtureKey("ec-p256-sec1.pem")
        let key = try JWSSigningKey(pem: pem, keyID: "cli-key")
        let client = TestProvider.Client.privateKeyJWT(id: "fapi-cli", keys: [key], redirectURIs: ["http://127.0.0.1/callback"])
        var configuration = Self.provider(.offered)
        configuration.clients = [client]
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let file = try ClientCredentialsCommandTests.privateFile(sandbox, "key.pem", pem)
            let login = try await sandbox.run([
                "login", "--issuer", provider.issuer, "--client-id", "fapi-cli", "--profile", "bank", "--client-auth", "private_key_jwt",
                "--private-key-file", file, "--key-id", "cli-key", "--request-object", "--par",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            let pushed = try #require(await provider.requestParameters(.pushedAuthorization).first)
            #expect(pushed["request"] != nil && pushed["client_assertion"] != nil && pushed["state"] == nil, "\(pushed.keys.sorted())")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/bank.json", encoding: .utf8)
            #expect(profile.contains(#""request_object" : true"#), "\(profile)")
            // By value, from the profile: no push.
            let byValue = try await sandbox.run(["login", "--profile", "bank", "--no-par"])
            #expect(byValue.status == 0, "\(byValue.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
            #expect(await provider.requestParameters(.authorize).last.map { Set($0.keys) } == ["client_id", "request"])
        }
        var strict = Self.provider(.notOffered)
        strict.signedRequestObjects = .required
        try await withTestProvider(strict) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider))
            #expect(login.status == 2, "\(login.stderr)")
            #expect(login.stderr.contains("--private-key-file") && login.stderr.contains("--request-object"), "\(login.stderr)")
            #expect(await provider.requestCount(.authorize) == 0)
        }
    }
}
