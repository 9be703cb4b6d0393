import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `oidc login --flow client-credentials` and the commands that use such a login, with a client
/// secret and with `private_key_jwt`, run as the built binary against TestProvider over loopback HTTP.
@Suite("oidc login --flow client-credentials", .timeLimit(.scaledMinutes(3)))
struct ClientCredentialsCommandTests {
    static let secret = "daemon-secret-0123456789-abcdefghijklmnop"

    /// A file only its owner may read, holding `text`.
    static func privateFile(_ sandbox: LoginSandbox, _ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
        let path = sandbox.root.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    static func fixtureKey(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("OIDCTests/Fixtures/keys/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Makes the stored login's access token expired, as time would.
    static func expire(_ sandbox: LoginSandbox, profile: String) throws {
        let keychain = try FileKeychain(directory: URL(fileURLWithPath: sandbox.store))
        let key = TokenStoreKey(service: "oidc", account: profile)
        var login = try #require(try keychain.load(key))
        login.tokens.expiresAt = Date().addingTimeInterval(-10)
        try keychain.save(login, for: key)
    }

    @Test("with a secret file: stored under the profile with its scope and resource; token from the store; 20 processes on an expired login send one request")
    func secretAndTwentyProcesses() async throws {
        let configuration = TestProvider.Configuration(clients: [.confidential(id: "daemon", secret: Self.secret)])
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try Self.privateFile(sandbox, "secret", Self.secret + "\n")
            let login = try await sandbox.run([
                "-vv", "login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon",
                "--client-secret-file", secretFile, "--scope", "reports", "--param", "resource=https://api.example.com", "--profile", "ci",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            #expect(login.stderr.contains("client daemon has its own tokens from \(provider.issuer) (profile 'ci')"), "\(login.stderr)")
            #expect(!login.stderr.contains(Self.secret))
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == "client_credentials" && sent["scope"] == "reports" && sent["resource"] == "https://api.example.com")
            let stored = try #require(try sandbox.storedLogin("ci"))
            #expect(stored.subject == nil && stored.tokens.refreshToken == nil && stored.tokens.idToken == nil)
            LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")

            let token = try await sandbox.run(["token", "--profile", "ci"])
            #expect(token.status == 0 && token.stdout == stored.tokens.accessToken.revealedValue + "\n", "\(token.stderr)")
            let exec = try await sandbox.run(["token", "--profile", "ci", "--output", "exec-credential"])
            #expect(exec.status == 0 && exec.stdout.contains(stored.tokens.accessToken.revealedValue), "\(exec.stderr)")

            try Self.expire(sandbox, profile: "ci")
            let before = await provider.grantCount("client_credentials")
            // The token endpoint answers after 2 s: the twenty surely overlap, and wait on the lock.
            await provider.failNextTokenRequests(1, with: .delay(.seconds(2)))
            let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
                for _ in 0..<20 { group.addTask { try await sandbox.run(["token", "--profile", "ci"]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(await provider.grantCount("client_credentials") - before == 1)
            let printed = Set(results.map(\.stdout))
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
            #expect(printed.count == 1 && printed.first != stored.tokens.accessToken.revealedValue + "\n")
            let renewed = try #require(try sandbox.storedLogin("ci"))
            #expect(printed.first == renewed.tokens.accessToken.revealedValue + "\n")
            #expect(renewed.attributes["scope"] == "reports")

            // oidc request asks anew too; oidc refresh asks for a new token at once.
            let refresh = try await sandbox.run(["refresh", "--profile", "ci"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            #expect(await provider.grantCount("client_credentials") - before == 2)
            let text = try await sandbox.run(["status", "--profile", "ci"])
            #expect(text.stdout.contains("profile ci: client daemon has its own tokens (client credentials)"), "\(text.stdout)")
            let status = try await sandbox.run(["status", "--profile", "ci", "--output", "json"])
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
            #expect(entry["grant_type"] as? String == "client_credentials" && entry["refreshable"] as? Bool == true, "\(status.stdout)")
        }
    }

    @Test("private_key_jwt from a key file, the assertion addressed to the endpoint when asked; a key file others can read is refused")
    func privateKey() async throws {
        let pem = try Self.fixtureKey("ec-p256-sec1.pem")
        let key = try JWSSigningKey(pem: pem, keyID: "daemon-key")
        var configuration = TestProvider.Configuration(clients: [.privateKeyJWT(id: "daemon", keys: [key])])
        configuration.assertionAudience = .endpoint
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let arguments = ["-vv", "login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon", "--profile", "ci"]
            let open = try Self.privateFile(sandbox, "open.pem", pem, mode: 0o644)
            let refused = try await sandbox.run(arguments + ["--private-key-file", open, "--key-id", "daemon-key"])
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stderr.contains("--private-key-file") && refused.stderr.contains("chmod 600"))
            #expect(await provider.requestCount(.token) == 0)

            let file = try Self.privateFile(sandbox, "key.pem", pem)
            // The issuer as audience (the default) is refused by this provider; the endpoint is taken.
            let issuerAudience = try await sandbox.run(arguments + ["--private-key-file", file, "--key-id", "daemon-key"])
            #expect(issuerAudience.status == 4, "\(issuerAudience.stderr)")
            let login = try await sandbox.run(
                arguments + ["--private-key-file", file, "--key-id", "daemon-key", "--assertion-audience", "endpoint"])
            #expect(login.status == 0, "\(login.stderr)")
            let sent = try #require(await provider.tokenRequestParameters().last)
            let assertion = try UnverifiedJWT(try #require(sent["client_assertion"]))
            #expect(assertion.claims["aud"]?.stringValue == provider.tokenEndpoint)
            #expect(assertion.header["kid"]?.stringValue == "daemon-key")
            // Neither the key (any line of its PEM body) nor an assertion in any output.
            let keyLines = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            for output in [login.stderr, refused.stderr, issuerAudience.stderr] {
                #expect(!output.contains("PRIVATE KEY") && !output.contains(sent["client_assertion"] ?? "-"))
                #expect(!keyLines.contains { output.contains($0) })
            }
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/ci.json", encoding: .utf8)
            #expect(profile.contains(#""private_key_file" : "\#(file)""#) && profile.contains(#""assertion_audience" : "endpoint""#), "\(profile)")
            #expect(!profile.contains("PRIVATE KEY"))

            // Later commands sign with the remembered key and audience.
            try Self.expire(sandbox, profile: "ci")
            let before = await provider.grantCount("client_credentials")
            let token = try await sandbox.run(["-vv", "token", "--profile", "ci"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(await provider.grantCount("client_credentials") == before + 1)
            #expect(!token.stderr.contains("PRIVATE KEY") && !keyLines.contains { token.stderr.contains($0) })
        }
    }

    @Test("a key file without a kid: the assertion carries the key's RFC 7638 thumbprint, which a provider that looks keys up by kid takes; a refusal names --private-key-file, --key-id and --assertion-audience, not the library's words")
    func thumbprintKeyID() async throws {
        let pem = try Self.fixtureKey("ed25519-pkcs8.pem")
        let key = try JWSSigningKey(pem: pem)
        let thumbprint = try key.thumbprint()
        var configuration = TestProvider.Configuration(clients: [.privateKeyJWT(id: "daemon", keys: [key])])
        configuration.requiresKeyID = true
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let file = try Self.privateFile(sandbox, "key.pem", pem)
            let arguments = ["login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon", "--private-key-file", file]
            let login = try await sandbox.run(arguments + ["--profile", "ci"])
            #expect(login.status == 0, "\(login.stderr)")
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(try UnverifiedJWT(try #require(sent["client_assertion"])).header["kid"]?.stringValue == thumbprint)

            // A kid the provider does not know: refused, and the message speaks in this command's flags.
            let refused = try await sandbox.run(arguments + ["--key-id", "old-key", "--profile", "other"])
            #expect(refused.status == 4, "\(refused.stderr)")
            for flag in ["--private-key-file", "--key-id (now 'old-key'", "--assertion-audience (now issuer", "invalid_client"] {
                #expect(refused.stderr.contains(flag), "\(flag): \(refused.stderr)")
            }
            #expect(!refused.stderr.contains("assertionAudience") && !refused.stderr.contains(".issuer"), "\(refused.stderr)")
            #expect(try sandbox.storedLogin("other") == nil)
            let help = try await sandbox.run(["login", "--help"])
            #expect(help.stdout.contains("thumbprint"), "\(help.stdout)")
        }
    }

    @Test("usage errors before anything is sent: no credentials, a method without its credential, a secret with none")
    func usageErrors() async throws {
        let configuration = TestProvider.Configuration(clients: [.confidential(id: "daemon", secret: Self.secret, authentication: .clientSecretPost)])
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try Self.privateFile(sandbox, "secret", Self.secret)
            let base = ["login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon", "--profile", "ci"]
            for (extra, message) in [
                ([String](), "needs the client's credentials"),
                (["--client-auth", "private_key_jwt"], "needs --private-key-file"),
                (["--client-auth", "client_secret_post"], "needs the client secret"),
                (["--client-auth", "none", "--client-secret-file", secretFile], "sends no credentials"),
                (["--client-auth", "bogus"], "is not one of"),
            ] {
                let result = try await sandbox.run(base + extra)
                #expect(result.status == 2, "\(extra): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(extra): \(result.stderr)")
            }
            #expect(await provider.requestCount(.token) == 0)
            let post = try await sandbox.run(base + ["--client-secret-file", secretFile, "--client-auth", "client_secret_post"])
            #expect(post.status == 0, "\(post.stderr)")
            #expect(await provider.tokenRequestParameters().last?["client_secret"] != nil)
        }
    }
}
