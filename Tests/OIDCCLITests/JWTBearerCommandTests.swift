import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `oidc login --flow jwt-bearer` (RFC 7523 §2.1) and the commands that use such a login, run as the
/// built binary against TestProvider over loopback HTTP: a workload identity file traded for tokens,
/// presented again (as it is then) when they expire; refusals and bad files.
@Suite("oidc login --flow jwt-bearer", .timeLimit(.scaledMinutes(3)))
struct JWTBearerCommandTests {
    static let grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static func provider() throws -> (TestProvider.Configuration, TestSigningKey) {
        let key = try TestSigningKey.generate(.es256, keyID: "cluster-1")
        var daemon = TestProvider.Client.confidential(id: "daemon", secret: ClientCredentialsCommandTests.secret)
        daemon.allowedScopes = ["reports"]
        return (try WorkloadAssertion.trusting(key, in: TestProvider.Configuration(clients: [.default, daemon])), key)
    }

    @Test("login with a secret, scope and resource; token from the store; status; a rotated file presented again on expiry; refused assertions exit 4 after one request")
    func lifecycle() async throws {
        let (configuration, key) = try Self.provider()
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "secret", ClientCredentialsCommandTests.secret)
            let first = try WorkloadAssertion.make(key, subject: "builder-1", audience: provider.issuer)
            let assertionFile = try ClientCredentialsCommandTests.privateFile(sandbox, "token", first.revealedValue + "\n")
            let login = try await sandbox.run([
                "-vv", "login", "--flow", "jwt-bearer", "--issuer", provider.issuer, "--client-id", "daemon", "--client-secret-file", secretFile,
                "--assertion-file", assertionFile, "--scope", "reports", "--resource", "https://api.example.com/", "--profile", "ci",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            #expect(login.stderr.contains("client daemon has tokens for its assertion from \(provider.issuer) (profile 'ci')"), "\(login.stderr)")
            #expect(!login.stderr.contains(first.revealedValue) && !login.stderr.contains(ClientCredentialsCommandTests.secret))
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == Self.grant && sent["assertion"] == first.revealedValue)
            #expect(sent["scope"] == "reports" && sent["resource"] == "https://api.example.com/")
            #expect(await provider.grantCount(Self.grant) == 1)
            #expect(await provider.requestCount(.token) == 1, "one request")
            let stored = try #require(try sandbox.storedLogin("ci"))
            #expect(stored.tokens.refreshToken == nil && stored.subject == nil && stored.grant?.type == .jwtBearer)
            #expect(stored.resource == "https://api.example.com/")
            LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/ci.json", encoding: .utf8)
            #expect(profile.contains(#""assertion_file" : "\#(assertionFile)""#) && profile.contains(#""flow" : "jwt-bearer""#), "\(profile)")
            #expect(!profile.contains(first.revealedValue))

            let token = try await sandbox.run(["token", "--profile", "ci"])
            #expect(token.status == 0 && token.stdout == stored.tokens.accessToken.revealedValue + "\n", "\(token.stderr)")
            let status = try await sandbox.run(["status", "--profile", "ci", "--output", "json"])
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
            #expect(entry["grant_type"] as? String == Self.grant && entry["refreshable"] as? Bool == true, "\(status.stdout)")
            let text = try await sandbox.run(["status", "--profile", "ci"])
            #expect(text.stdout.contains("profile ci: client daemon has tokens for its assertion (JWT bearer grant)"), "\(text.stdout)")

            // The owner rotates the file; the token expires: the file's current content goes, with the resource.
            let second = try WorkloadAssertion.make(key, subject: "builder-2", audience: provider.issuer)
            try (second.revealedValue + "\n").write(toFile: assertionFile, atomically: true, encoding: .utf8)
            chmod(assertionFile, 0o600)
            try ClientCredentialsCommandTests.expire(sandbox, profile: "ci")
            let renewed = try await sandbox.run(["-vv", "token", "--profile", "ci"])
            #expect(renewed.status == 0, "\(renewed.stderr)")
            let again = try #require(await provider.tokenRequestParameters().last)
            #expect(again["assertion"] == second.revealedValue && again["resource"] == "https://api.example.com/" && again["scope"] == "reports")
            #expect(await provider.grantCount(Self.grant) == 2)
            #expect(await provider.grantCount("refresh_token") == 0)
            #expect(!renewed.stderr.contains(second.revealedValue), "never printed")
            let kept = try #require(try sandbox.storedLogin("ci"))
            #expect(renewed.stdout == kept.tokens.accessToken.revealedValue + "\n" && kept.grant?.type == .jwtBearer)

            // An expired assertion: one request, exit 4 naming the refusal, no other grant; the old login stays.
            let expired = try WorkloadAssertion.make(key, audience: provider.issuer, lifetime: -60)
            try expired.revealedValue.write(toFile: assertionFile, atomically: true, encoding: .utf8)
            chmod(assertionFile, 0o600)
            try ClientCredentialsCommandTests.expire(sandbox, profile: "ci")
            let before = await provider.requestCount(.token)
            let refused = try await sandbox.run(["token", "--profile", "ci"])
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("invalid_grant"), "\(refused.stderr)")
            #expect(!refused.stderr.contains(expired.revealedValue))
            #expect(await provider.requestCount(.token) == before + 1, "no retry, no other grant")

            let loginRefused = try await sandbox.run([
                "login", "--flow", "jwt-bearer", "--issuer", provider.issuer, "--client-id", "daemon", "--client-secret-file", secretFile,
                "--assertion-file", assertionFile, "--profile", "other",
            ])
            #expect(loginRefused.status == 4, "\(loginRefused.stderr)")
            #expect(await provider.requestCount(.token) == before + 2)
            #expect(try sandbox.storedLogin("other") == nil, "nothing stored")
        }
    }

    @Test("bad input exits 2 before any request: no assertion file, a file others can write or read, not a JWT, --assertion-file without the flow, no --issuer")
    func badInput() async throws {
        let (configuration, key) = try Self.provider()
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let jwt = try WorkloadAssertion.make(key, audience: provider.issuer).revealedValue
            let good = try ClientCredentialsCommandTests.privateFile(sandbox, "good", jwt)
            let arguments = ["login", "--flow", "jwt-bearer", "--issuer", provider.issuer, "--client-id", "daemon", "--profile", "w"]
            let cases: [([String], String)] = [
                (arguments, "--assertion-file"),
                (arguments + ["--assertion-file", try ClientCredentialsCommandTests.privateFile(sandbox, "writable", jwt, mode: 0o666)], "--assertion-file"),
                (arguments + ["--assertion-file", try ClientCredentialsCommandTests.privateFile(sandbox, "readable", jwt, mode: 0o644)], "--assertion-file"),
                (arguments + ["--assertion-file", sandbox.root.appendingPathComponent("missing").path], "--assertion-file"),
                (arguments + ["--assertion-file", try ClientCredentialsCommandTests.privateFile(sandbox, "text", "hello world")], "JWT"),
                (["login", "--issuer", provider.issuer, "--client-id", "daemon", "--assertion-file", good, "--profile", "x"], "--flow jwt-bearer"),
                (["login", "--flow", "jwt-bearer", "--resource", "https://api.example.com/", "--client-id", "daemon", "--assertion-file", good, "--profile", "y"], "--issuer"),
            ]
            for (command, named) in cases {
                let result = try await sandbox.run(command)
                #expect(result.status == 2, "\(command): \(result.stderr)")
                #expect(result.stderr.contains(named), "\(command): \(result.stderr)")
                #expect(!result.stderr.contains(jwt))
            }
            #expect(await provider.requestCount(.token) == 0)
        }
    }
}
