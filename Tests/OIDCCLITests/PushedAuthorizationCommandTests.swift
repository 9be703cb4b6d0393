import Foundation
import OIDC
import OIDCTesting
import Testing

/// `oidc login --par` (RFC 9126), run as the built binary against TestProvider with the test browser.
@Suite("oidc login --par", .timeLimit(.minutes(2)))
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
}
