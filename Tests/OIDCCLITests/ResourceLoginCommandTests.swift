import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --resource URL` (RFC 9728, RFC 7591, RFC 8707) and what follows it: `oidc request`,
/// step-up on a 403 `insufficient_scope`, refreshes with `resource`, the registration shared by
/// profiles; the built binary against TestProvider's protected resource, with the test browser.
@Suite("oidc login --resource", .timeLimit(.scaledMinutes(3)))
struct ResourceLoginCommandTests {
    /// A plain OAuth server (RFC 8414 only), as MCP authorization servers are, with registration
    /// that matches loopback ports exactly; the resource's `scopes_supported` is `read`, and its
    /// step-up route needs `admin`.
    static var configuration: TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.metadataDocuments = .oauthOnly
        var registration = TestProvider.Registration()
        registration.exactLoopbackPort = true
        configuration.registration = registration
        configuration.protectedResource.scopesSupported = ["read"]
        return configuration
    }

    static func registration(_ sandbox: LoginSandbox, _ issuer: String) async throws -> ClientRegistration? {
        try await FileRegistrationStore(directory: URL(fileURLWithPath: sandbox.store + "/registrations", isDirectory: true)).registration(for: issuer)
    }

    /// Neither the registration's secrets nor a token of `profile` in `text`.
    static func expectNothingSecret(_ text: String, _ registration: ClientRegistration?, _ login: StoredLogin?, _ comment: String) {
        for secret in [registration?.registrationAccessToken, registration?.clientSecret].compactMap({ $0?.revealedValue }) {
            #expect(!text.contains(secret), "a registration secret appears in \(comment)")
        }
        LoginCommandTests.expectNoSecret(text, login?.tokens, comment)
    }

    @Test("with no issuer and no client id: registered once, logged in for the resource (resource on authorize and token), remembered; request takes it; a second profile reuses the registration and its port; no secret shown")
    func loginRegisterReuse() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            #expect(login.stderr.contains("no ID token (a plain OAuth server)"), "\(login.stderr)")
            #expect(await provider.registrationCount() == 1)
            let registration = try #require(try await Self.registration(sandbox, provider.issuer))
            let port = try #require(registration.callbackPort)
            let stored = try #require(try sandbox.storedLogin("mcp"))
            #expect(stored.resource == provider.resourceURL)
            #expect(stored.clientID == registration.clientID && stored.issuer == provider.issuer && stored.subject == nil)
            #expect(stored.tokens.scopes == ["read"])
            let authorize = try #require(await provider.requestParameters(.authorize).last)
            #expect(authorize["resource"] == provider.resourceURL && authorize["scope"] == "read", "\(authorize)")
            #expect(authorize["redirect_uri"] == "http://127.0.0.1:\(port)/callback")
            #expect(await provider.requestParameters(.token).last?["resource"] == provider.resourceURL)
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/mcp.json", encoding: .utf8)
            #expect(profile.contains(#""resource" : "\#(provider.resourceURL)""#), "\(profile)")
            #expect(!profile.contains(registration.clientID), "the registration is kept per issuer, not in the profile")
            #expect(LoginSandbox.permissions(sandbox.store + "/registrations") == 0o700)
            let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.store + "/registrations")
            // One registration, and the lock it was made under; every file 0600.
            #expect(files.filter { $0.hasSuffix(".json") }.count == 1 && files.allSatisfy { LoginSandbox.permissions(sandbox.store + "/registrations/" + $0) == 0o600 }, "\(files)")

            let request = try await sandbox.run(["request", provider.resourceURL, "--profile", "mcp"])
            #expect(request.status == 0, "\(request.stderr)")
            #expect(request.stderr.contains("HTTP 200"), "\(request.stderr)")

            let second = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "other"])
            #expect(second.status == 0, "\(second.stderr)")
            #expect(await provider.registrationCount() == 1)
            #expect(try sandbox.storedLogin("other")?.clientID == registration.clientID)
            #expect(await provider.requestParameters(.authorize).last?["redirect_uri"] == "http://127.0.0.1:\(port)/callback")
            // Logging in again under the profile needs no flag.
            let again = try await sandbox.run(["login", "--profile", "mcp"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(await provider.registrationCount() == 1)

            let status = try await sandbox.run(["status", "--all", "--output", "json"])
            #expect(status.stdout.contains(#""resource" : "\#(provider.resourceURL)""#), "\(status.stdout)")
            let text = try await sandbox.run(["status", "--profile", "mcp"])
            #expect(text.stdout.contains("no ID token (a plain OAuth server)") && text.stdout.contains("  resource:    \(provider.resourceURL)"), "\(text.stdout)")
            let verbose = try await sandbox.run(["-vv", "login", "--profile", "other"])
            #expect(verbose.status == 0, "\(verbose.stderr)")
            for (text, what) in [(login.stderr, "login"), (second.stderr, "the second login"), (status.stdout, "status"), (verbose.stderr, "a -vv login"), (request.stderr, "request")] {
                Self.expectNothingSecret(text, registration, try sandbox.storedLogin("mcp"), what)
            }
        }
    }

    @Test("a 403 insufficient_scope exits 4 naming the scope and the command; that command, run by a shell, logs in for the union and the call succeeds; a forced refresh carries resource")
    func stepUpAndRefresh() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(login.status == 0, "\(login.stderr)")
            let refused = try await sandbox.run(["request", provider.stepUpResourceURL, "--profile", "mcp"])
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("HTTP 403"), "\(refused.stderr)")
            #expect(refused.stderr.contains("needs the scope admin (the login lacks admin)"), "\(refused.stderr)")
            let line = try #require(refused.stderr.split(separator: "\n").first { $0.contains("oidc: error:") })
            let command = try #require(line.range(of: "oidc login --profile mcp").map { String(line[$0.lowerBound...]) })
            #expect(command == "oidc login --profile mcp --scope 'read admin'", "\(command)")
            #expect(await provider.grantCount("refresh_token") == 0, "a 403 is no reason to refresh")

            var environment = sandbox.environment()
            environment["PATH"] = OIDCBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let stepUp = try await CLIReferenceTests.shell(command, environment: environment)
            #expect(stepUp.status == 0, "\(stepUp.stderr)")
            #expect(await provider.requestParameters(.authorize).last?["scope"] == "read admin")
            #expect(await provider.registrationCount() == 1)
            let granted = try await sandbox.run(["request", provider.stepUpResourceURL, "--profile", "mcp"])
            #expect(granted.status == 0, "\(granted.stderr)")

            let forced = try await sandbox.run(["token", "--profile", "mcp", "--force-refresh", "--output", "header"])
            #expect(forced.status == 0, "\(forced.stderr)")
            let refresh = try #require(await provider.requestParameters(.token).last)
            #expect(refresh["grant_type"] == "refresh_token" && refresh["resource"] == provider.resourceURL, "\(refresh)")
            let stored = try #require(try sandbox.storedLogin("mcp"))
            #expect(forced.stdout == "Authorization: Bearer \(stored.tokens.accessToken.revealedValue)\n")
            #expect(try await TokenHeaderOutputTests.status(of: provider.stepUpResourceURL, headerLines: [String(forced.stdout.dropLast())]) == 200)
        }
    }

    @Test("refusals before anything is sent: another resource in the metadata, no authorization server, a bad URL, --resource twice or with a preset, another host than the resource's and the issuer's")
    func refusals() async throws {
        var mismatched = Self.configuration
        mismatched.protectedResource.advertisedResource = "https://elsewhere.example/resource"
        try await withTestProvider(mismatched) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains("resource"), "\(login.stderr)")
            #expect(await provider.registrationCount() == 0)
            #expect(await provider.requestParameters(.authorize).isEmpty)
            #expect(try sandbox.storedLogin("mcp") == nil)
            #expect(!FileManager.default.fileExists(atPath: sandbox.profileDirectory + "/mcp.json"))
        }
        var serverless = Self.configuration
        serverless.protectedResource.authorizationServers = []
        try await withTestProvider(serverless) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(await provider.registrationCount() == 0)
        }
        let sandbox = LoginSandbox()
        for arguments in [
            ["--resource", "ftp://mcp.example.com/mcp"],
            ["--resource", "http://mcp.example.com/mcp"],  // plain http off loopback
            ["--resource", "https://mcp.example.com/mcp#part"],
            ["--resource", "https://mcp.example.com/mcp", "--param", "resource=https://mcp.example.com/mcp"],
            ["--resource", "https://mcp.example.com/mcp", "--provider", "swan"],
        ] {
            let result = try await sandbox.run(["login", "--profile", "bad"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
        }
        // A password in the URL: refused without being shown.
        let withPassword = try await sandbox.run(["login", "--profile", "bad", "--resource", "https://user:hunter2-secret@mcp.example.com/mcp"])
        #expect(withPassword.status == 2 && withPassword.stderr.contains("no user or password"), "\(withPassword.stderr)")
        #expect(!withPassword.stderr.contains("hunter2-secret") && !withPassword.stdout.contains("hunter2-secret"))

        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(login.status == 0, "\(login.stderr)")
            let port = try #require(URL(string: provider.resourceURL)?.port)
            let otherPort = try await sandbox.run(["request", "http://127.0.0.1:\(port + 1)/resource", "--profile", "mcp"])
            #expect(otherPort.status == 6, "\(otherPort.stderr)")
            #expect(otherPort.stderr.contains("the issuer's or the resource's"), "\(otherPort.stderr)")
        }
    }

    @Test("a resource whose metadata wants DPoP-bound tokens (oidc resource-server --dpop required): with --no-dpop exit 2 before anyone signs in; with --dpop a DPoP-bound login for the resource; status shows the resource")
    func dpopRequired() async throws {
        var configuration = Self.configuration
        configuration.metadataDocuments = .openIDAndOAuth
        try await withTestProvider(configuration) { provider in
            let server = try await ResourceServerProcess.start(["--issuer", provider.issuer, "--audience", "https://api.example.com", "--dpop", "required"])
            let sandbox = LoginSandbox()
            let bearer = try await sandbox.run(["login", "--resource", server.base, "--scope", "openid", "--no-dpop", "--profile", "dp"])
            #expect(bearer.status == 2, "\(bearer.stderr)")
            #expect(bearer.stderr.contains("dpop_bound_access_tokens_required") && bearer.stderr.contains("add --dpop"), "\(bearer.stderr)")
            #expect(await provider.requestParameters(.authorize).isEmpty)
            let bound = try await sandbox.run(["login", "--resource", server.base, "--scope", "openid", "--dpop", "--profile", "dp"])
            #expect(bound.status == 0, "\(bound.stderr)")
            let stored = try #require(try sandbox.storedLogin("dp"))
            #expect(stored.isDPoPBound && stored.resource == server.base && stored.subject != nil)
            let status = try await sandbox.run(["status", "--profile", "dp"])
            #expect(status.status == 0 && status.stdout.contains("  resource:    \(server.base)"), "\(status.stdout)")
            _ = await server.stop()
        }
    }

    @Test("--new-registration: a server that forgot the client gets a new registration, which every profile then uses; it needs a --resource profile without --client-id")
    func newRegistration() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(first.status == 0, "\(first.stderr)")
            let old = try #require(try await Self.registration(sandbox, provider.issuer))
            await provider.forgetRegistrations()
            // The server forgot the client: a refresh says so and names what registers anew.
            let refused = try await sandbox.run(["token", "--profile", "mcp", "--force-refresh"])
            #expect(refused.status == 4 && refused.stderr.contains("invalid_client"), "\(refused.stderr)")
            #expect(refused.stderr.contains("log in again with oidc login --profile NAME, which registers anew"), "\(refused.stderr)")
            let again = try await sandbox.run(["login", "--profile", "mcp", "--new-registration"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(await provider.registrationCount() == 2)
            let new = try #require(try await Self.registration(sandbox, provider.issuer))
            #expect(new.clientID != old.clientID && new.callbackPort == old.callbackPort)
            #expect(try sandbox.storedLogin("mcp")?.clientID == new.clientID)
            let other = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "other"])
            #expect(other.status == 0, "\(other.stderr)")
            #expect(try sandbox.storedLogin("other")?.clientID == new.clientID)
            #expect(await provider.registrationCount() == 2)
            Self.expectNothingSecret(again.stderr, new, nil, "the new registration's login")
            // A profile with no login of its own: --new-registration keeps the replaced registration's port too.
            await provider.forgetRegistrations()
            let fresh = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "fresh", "--new-registration"])
            #expect(fresh.status == 0, "\(fresh.stderr)")
            let third = try #require(try await Self.registration(sandbox, provider.issuer))
            #expect(third.clientID != new.clientID && third.callbackPort == old.callbackPort)
            #expect(await provider.registrationCount() == 3)

            let withID = try await sandbox.run(["login", "--resource", provider.resourceURL, "--client-id", "test-client", "--new-registration", "--profile", "given"])
            #expect(withID.status == 2, "\(withID.stderr)")
            let plain = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--new-registration", "--profile", "plain"])
            #expect(plain.status == 2, "\(plain.stderr)")
        }
    }

    @Test("--resource --flow device: a registered client's device login carries resource on the device request and the polls; the login keeps it for its refreshes")
    func deviceFlow() async throws {
        var configuration = Self.configuration
        configuration.metadataDocuments = .openIDAndOAuth
        configuration.deviceFlow = .init(expiresIn: 120, interval: 1)
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            async let approved = DeviceLoginCommandTests.decide(provider)
            let login = try await sandbox.run(
                ["login", "--resource", provider.resourceURL, "--flow", "device", "--scope", "openid read", "--profile", "tv"],
                extra: DeviceLoginCommandTests.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(await provider.requestParameters(.deviceAuthorization).last?["resource"] == provider.resourceURL)
            let poll = try #require(await provider.tokenRequestParameters().last { $0["grant_type"]?.hasSuffix("device_code") == true })
            #expect(poll["resource"] == provider.resourceURL)
            let stored = try #require(try sandbox.storedLogin("tv"))
            #expect(stored.resource == provider.resourceURL && stored.subject == "test-user")
            let forced = try await sandbox.run(["refresh", "--profile", "tv"])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)
        }
    }
}
