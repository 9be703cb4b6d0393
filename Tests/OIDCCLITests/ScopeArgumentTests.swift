import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `--scope` as users write it: RFC 6749 §3.3's scope is a list of space-delimited tokens, so each
/// value is split on spaces (never on commas, which a scope token may hold), each token checked
/// (`%x21 / %x23-5B / %x5D-7E`), and repeats dropped in order; in every command that takes scopes.
@Suite("--scope takes space-separated scope tokens", .timeLimit(.scaledMinutes(3)))
struct ScopeArgumentTests {
    @Test("authorize-url: \"openid profile\" is the two tokens, as --scope openid --scope profile; repeats dropped in order; a comma kept inside its token")
    func authorizeURL() async throws {
        let base = ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "c"] + AuthorizeURLCommandTests.deterministic
        let repeated = try await OIDCBinary.run(base + ["--scope", "openid", "--scope", "profile", "--scope", "a,b"])
        #expect(repeated.status == 0, "\(repeated.stderr)")
        #expect(repeated.stdout.contains("scope=openid%20profile%20a%2Cb&"), "\(repeated.stdout)")
        for values in [["openid profile a,b"], [" openid  profile ", "profile a,b openid"], ["openid", "openid profile", "a,b"]] {
            let spaced = try await OIDCBinary.run(base + values.flatMap { ["--scope", $0] })
            #expect(spaced.status == 0, "\(values): \(spaced.stderr)")
            #expect(spaced.stdout == repeated.stdout, "\(values)")
        }
    }

    @Test("a token outside RFC 6749 §3.3 is a usage error naming --scope (exit 2), in any command", arguments: [
        #"openid "x"#, #"openid a\b"#, "openid\tprofile", "openid é", " ",
    ])
    func invalid(value: String) async throws {
        let authorize = try await OIDCBinary.run(
            ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "c", "--scope", value])
        #expect(authorize.status == 2 && authorize.stderr.contains("--scope"), "\(authorize.stderr)")
        let login = try await LoginSandbox().run(["login", "--issuer", "http://127.0.0.1:1", "--client-id", "c", "--profile", "p", "--scope", value])
        #expect(login.status == 2 && login.stderr.contains("--scope"), "\(login.stderr)")
        let exchange = try await LoginSandbox().run(["exchange", "--profile", "p", "--scope", value])
        #expect(exchange.status == 2 && exchange.stderr.contains("--scope"), "\(exchange.stderr)")
    }

    @Test("oidc login --scope \"openid profile\": the browser login asks for both, and the profile remembers the two tokens")
    func browserLogin() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run([
                "login", "--issuer", provider.issuer, "--client-id", "test-client", "--scope", "openid profile", "--scope", "profile", "--profile", "work",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            let sent = try #require(await provider.requestParameters(.authorize).first)
            #expect(sent["scope"] == "openid profile", "\(sent)")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(profile.utf8)) as? [String: Any])
            #expect(object["scopes"] as? [String] == ["openid", "profile"], "\(profile)")
        }
    }

    @Test("the device flow and client credentials send the split scopes")
    func deviceAndClientCredentials() async throws {
        try await DeviceLoginCommandTests.deviceProvider { provider in
            let sandbox = LoginSandbox()
            async let approved = DeviceLoginCommandTests.decide(provider)
            let login = try await sandbox.run(
                DeviceLoginCommandTests.arguments(provider, ["--flow", "device", "--scope", "openid profile offline_access"]),
                extra: DeviceLoginCommandTests.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            let sent = try #require(await provider.requestParameters(.deviceAuthorization).last)
            #expect(sent["scope"] == "openid profile offline_access", "\(sent)")
        }
        let configuration = TestProvider.Configuration(clients: [.confidential(id: "daemon", secret: ClientCredentialsCommandTests.secret)])
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "secret", ClientCredentialsCommandTests.secret)
            let login = try await sandbox.run([
                "login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon",
                "--client-secret-file", secretFile, "--scope", "reports  api.read", "--scope", "reports", "--profile", "ci",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try #require(await provider.tokenRequestParameters().last)["scope"] == "reports api.read")

            let exchange = try await sandbox.run(["exchange", "--profile", "ci", "--audience", "reports-api", "--scope", "reports api.read reports"])
            #expect(exchange.status == 0, "\(exchange.stderr)")
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange" && sent["scope"] == "reports api.read", "\(sent)")
        }
    }
}
