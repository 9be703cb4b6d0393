import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// User trial 5's login findings (F15, F19, F20, F23, F26), run as the built binary against
/// TestProvider, or `oidc provider`, over loopback HTTP: what a login says when it times out or is
/// refused, the times it shows, and what it asks a resource for.
@Suite("User trial 5: login messages, times and resource scopes", .timeLimit(.scaledMinutes(3)))
struct UserTrial5LoginMessageTests {
    /// A browser that opens the URL it is given (one GET, no redirect followed) and goes no further,
    /// as a person who opened the link and walked away.
    static func walkAwayBrowser(_ sandbox: LoginSandbox) throws -> String {
        let path = sandbox.root.appendingPathComponent("walk-away.sh").path
        try "#!/bin/sh\nexec curl -s -o /dev/null \"$1\"\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o700)
        return path
    }

    @Test("F23: a browser login that times out after the link was opened says so without internal fields")
    func browserTimeoutWithoutFields() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(
                ["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "f23", "--timeout", "\(TestTime.scaled(2))",
                 "--browser", try Self.walkAwayBrowser(sandbox)],
                extra: ["OIDC_BROWSER_HANDOFF": "url"])
            #expect(login.status == 3, "\(login.stderr)")
            #expect(login.stderr.contains("No sign-in came back to http://127.0.0.1:"), "\(login.stderr)")
            #expect(login.stderr.contains("within \(TestTime.scaled(2)) s"), "\(login.stderr)")
            #expect(!login.stderr.contains("startOpened") && !login.stderr.contains("timeout: \(TestTime.scaled(2)) s"), "\(login.stderr)")
            #expect(try sandbox.storedLogin("f23") == nil)
        }
    }

    @Test("F23: --no-browser nobody opened: advice for a person opening the URL by hand, not about snap browsers or OIDC_BROWSER_HANDOFF")
    func noBrowserTimeoutAdvice() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "f23", "--no-browser", "--timeout", "\(TestTime.scaled(1))"])
            #expect(login.status == 3, "\(login.stderr)")
            #expect(login.stderr.contains("Nobody opened the sign-in link within \(TestTime.scaled(1)) s"), "\(login.stderr)")
            #expect(login.stderr.contains("open the URL it prints in a browser on this machine"), "\(login.stderr)")
            #expect(login.stderr.contains("--flow device"), "\(login.stderr)")
            for unfit in ["OIDC_BROWSER_HANDOFF", "snap", "flatpak", "startOpened"] {
                #expect(!login.stderr.contains(unfit), "\(unfit): \(login.stderr)")
            }
        }
    }

    @Test("F26: the device flow shows times as RFC 3339 UTC, and with a --timeout shorter than the code's life, when the wait ends")
    func deviceTimes() async throws {
        try await DeviceLoginCommandTests.deviceProvider(expiresIn: 600) { provider in
            let sandbox = LoginSandbox()
            let waited = try await sandbox.run(
                DeviceLoginCommandTests.arguments(provider, ["--flow", "device", "--timeout", "\(TestTime.scaled(2))"]), extra: DeviceLoginCommandTests.headless)
            #expect(waited.status == 3, "\(waited.stderr)")
            let time = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/
            let line = try #require(waited.stderr.split(separator: "\n").first { $0.contains("waiting for you to approve") }.map(String.init))
            let stamp = #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#
            #expect(line.contains(try Regex("until \(stamp), --timeout \(TestTime.scaled(2)) s; the code itself expires at \(stamp)")), "\(line)")
            #expect(line.matches(of: time).count == 2, "\(line)")
        }
        // Approved without --timeout (a provider of its own: the code above is still pending there):
        // the code's expiry, and the success line, in one format.
        try await DeviceLoginCommandTests.deviceProvider(expiresIn: 600) { provider in
            let sandbox = LoginSandbox()
            async let approved = DeviceLoginCommandTests.decide(provider)
            let login = try await sandbox.run(DeviceLoginCommandTests.arguments(provider, ["--flow", "device"]), extra: DeviceLoginCommandTests.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains(/the code expires at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; Ctrl-C to cancel/), "\(login.stderr)")
            #expect(login.stderr.contains(/expires at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/), "\(login.stderr)")
            #expect(!login.stderr.contains(/expires at \d\d:\d\d:\d\d[^Z]/), "\(login.stderr)")
        }
    }

    @Test("F15: a private_key_jwt refusal without an OAuth error (glewlwyd's 403, empty body) names a missing --scope as a cause")
    func assertionRefusalNamesScope() async throws {
        let pem = try ClientCredentialsCommandTests.fixtureKey("ec-p256-sec1.pem")
        let key = try JWSSigningKey(pem: pem, keyID: "daemon-key")
        try await withTestProvider(TestProvider.Configuration(clients: [.privateKeyJWT(id: "daemon", keys: [key])])) { provider in
            let sandbox = LoginSandbox()
            let file = try ClientCredentialsCommandTests.privateFile(sandbox, "key.pem", pem)
            await provider.failNextTokenRequests(1, with: .emptyBody(status: 403))
            let refused = try await sandbox.run(
                ["login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon", "--private-key-file", file,
                 "--key-id", "daemon-key", "--profile", "ci"])
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("(1) the key of --private-key-file"), "\(refused.stderr)")
            #expect(refused.stderr.contains("(4) the provider may require a --scope"), "\(refused.stderr)")
            // With an OAuth error the provider said what it was: no scope guess.
            await provider.failNextTokenRequests(1, with: .oauthError("invalid_client", status: 401))
            let invalid = try await sandbox.run(
                ["login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon", "--private-key-file", file,
                 "--key-id", "daemon-key", "--profile", "ci"])
            #expect(invalid.status == 4, "\(invalid.stderr)")
            #expect(invalid.stderr.contains("invalid_client") && !invalid.stderr.contains("--scope"), "\(invalid.stderr)")
        }
    }

    @Test("F3, F19, F20: oidc provider's help says how to log in for /resource and for oidc resource-server; a --resource login without --scope asks for the 401's scope only, admin is a step-up")
    func providerResourceLogin() async throws {
        let help = try await OIDCBinary.run(["provider", "--help"])
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for phrase in ["--client-id test-client", "--registration", "--param resource=URL", "oidc resource-server", "at+jwt"] {
            #expect(text.contains(phrase), "\(phrase): \(text)")
        }

        let (process, issuer) = try await ProviderAndMintCommandTests.startProvider()
        defer { process.signal(SIGKILL); _ = process.waitForExit() }
        let sandbox = LoginSandbox()
        let login = try await sandbox.run(["login", "--resource", issuer + "/resource", "--client-id", "test-client", "--flow", "browser", "--profile", "mcp"])
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await sandbox.run(["status", "--profile", "mcp", "--output", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
        let scopes = Set((object["scopes"] as? [String]) ?? ((object["scope"] as? String)?.split(separator: " ").map(String.init) ?? []))
        #expect(scopes.contains("read") && !scopes.contains("admin") && !scopes.contains("write"), "\(status.stdout)")
        #expect(try await sandbox.run(["request", issuer + "/resource", "--profile", "mcp"]).status == 0)
        let admin = try await sandbox.run(["request", issuer + "/resource/admin", "--profile", "mcp"])
        #expect(admin.status == 4, "\(admin.stderr)")
        #expect(admin.stderr.contains("admin"), "\(admin.stderr)")
    }
}
