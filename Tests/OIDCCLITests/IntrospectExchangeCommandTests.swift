import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc introspect` (RFC 7662) and `oidc exchange` (RFC 8693), run as the built binary against
/// TestProvider over loopback HTTP, as a client-credentials profile.
@Suite("oidc introspect and oidc exchange", .timeLimit(.scaledMinutes(3)))
struct IntrospectExchangeCommandTests {
    static func withLogin(_ body: (TestProvider, LoginSandbox, StoredLogin) async throws -> Void) async throws {
        let configuration = TestProvider.Configuration(clients: [.confidential(id: "daemon", secret: ClientCredentialsCommandTests.secret)])
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "secret", ClientCredentialsCommandTests.secret)
            let login = try await sandbox.run([
                "login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon",
                "--client-secret-file", secretFile, "--scope", "reports", "--profile", "ci",
            ])
            try #require(login.status == 0, "\(login.stderr)")
            try await body(provider, sandbox, try #require(try sandbox.storedLogin("ci")))
        }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test("the profile's token is active (exit 0, the answer as JSON); a token from stdin or a file that is not, exit 4; the hint is sent")
    func introspect() async throws {
        try await Self.withLogin { provider, sandbox, stored in
            let own = try await sandbox.run(["introspect", "--profile", "ci"])
            #expect(own.status == 0, "\(own.stderr)")
            let answer = try Self.json(own.stdout)
            #expect(answer["active"] as? Bool == true && answer["client_id"] as? String == "daemon" && answer["scope"] as? String == "reports")
            #expect(own.stdout.filter { $0 == "\n" }.count == 1)  // one line, for scripts

            let unknown = try await sandbox.run(["introspect", "--profile", "ci", "-", "--token-type-hint", "access_token"], stdin: "not-a-token\n")
            #expect(unknown.status == 4, "\(unknown.stderr)")
            #expect(try Self.json(unknown.stdout)["active"] as? Bool == false)
            let sent = await provider.requestParameters(.introspection).last
            #expect(sent?["token"] == "not-a-token" && sent?["token_type_hint"] == "access_token")

            let file = try ClientCredentialsCommandTests.privateFile(sandbox, "token", stored.tokens.accessToken.revealedValue)
            let fromFile = try await sandbox.run(["introspect", "--profile", "ci", "@" + file])
            #expect(fromFile.status == 0, "\(fromFile.stderr)")

            // The profile's token expired: a new one is asked for first, and that one is active.
            try ClientCredentialsCommandTests.expire(sandbox, profile: "ci")
            let before = await provider.grantCount("client_credentials")
            let renewed = try await sandbox.run(["introspect", "--profile", "ci"])
            #expect(renewed.status == 0, "\(renewed.stderr)")
            let renewedAnswer = try Self.json(renewed.stdout)
            #expect(renewedAnswer["active"] as? Bool == true)
            #expect(await provider.grantCount("client_credentials") == before + 1)

            let noRefresh = try await sandbox.run(["introspect", "--profile", "ci", "--token-type-hint", "refresh_token"])
            #expect(noRefresh.status == 2 && noRefresh.stderr.contains("no refresh token"), "\(noRefresh.stderr)")
        }
    }

    @Test("exchange: the profile's access token (or one from a file) for a new one; --output json names issued_token_type; a token in argv is refused")
    func exchange() async throws {
        try await Self.withLogin { provider, sandbox, stored in
            let plain = try await sandbox.run(["exchange", "--profile", "ci", "--audience", "reports-api", "--resource", "https://api.example.com"])
            #expect(plain.status == 0, "\(plain.stderr)")
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange")
            #expect(sent["subject_token"] == stored.tokens.accessToken.revealedValue)
            #expect(sent["subject_token_type"] == TokenExchangeRequest.TokenType.accessToken)
            #expect(sent["audience"] == "reports-api" && sent["resource"] == "https://api.example.com")
            let issued = plain.stdout.trimmingCharacters(in: .newlines)
            #expect(!issued.isEmpty && issued != stored.tokens.accessToken.revealedValue)
            #expect(try await TokenCommandTests.resourceStatus(provider, token: issued) == 200)

            let file = try ClientCredentialsCommandTests.privateFile(sandbox, "subject", stored.tokens.accessToken.revealedValue)
            let json = try await sandbox.run(["exchange", "--profile", "ci", "--subject-token", "@" + file, "--output", "json"])
            #expect(json.status == 0, "\(json.stderr)")
            let answer = try Self.json(json.stdout)
            #expect(answer["issued_token_type"] as? String == TokenExchangeRequest.TokenType.accessToken)
            #expect(answer["access_token"] is String && answer["refresh_token"] == nil)

            // One `=`-joined argument: a random token that starts with "-" would otherwise be read as an option.
            let argv = try await sandbox.run(["exchange", "--profile", "ci", "--subject-token=" + stored.tokens.accessToken.revealedValue])
            #expect(argv.status == 2 && argv.stderr.contains("visible to other users in ps"), "\(argv.stderr)")

            let refused = try await sandbox.run(["exchange", "--profile", "ci", "--subject-token", "-"], stdin: "not-a-token")
            #expect(refused.status == 4 && refused.stderr.contains("invalid_grant"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("not-a-token"))
        }
    }
}
