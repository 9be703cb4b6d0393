import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --resource` where a demanding user meets its edges: a resource that takes only
/// DPoP-bound tokens, a kept registration the server forgot, the device flow at a plain OAuth
/// server, and the registered callback port taken by another program; the built binary against
/// TestProvider's protected resource, with the test browser.
@Suite("oidc login --resource: DPoP, forgotten registrations, device flow, a taken port", .timeLimit(.scaledMinutes(3)))
struct ResourceLoginEdgeTests {
    @Test("a resource that requires DPoP: DPoP turned on (one stderr line), the key kept with the login, the profile remembers it; request and a refresh work; --no-dpop exits 2 before anyone signs in")
    func dpopTurnedOn() async throws {
        var configuration = ResourceLoginCommandTests.configuration
        configuration.protectedResource.requiresDPoP = true
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let refused = try await sandbox.run(["login", "--resource", provider.resourceURL, "--no-dpop", "--profile", "dp"])
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stderr.contains("dpop_bound_access_tokens_required") && refused.stderr.contains("add --dpop"), "\(refused.stderr)")
            #expect(await provider.requestParameters(.authorize).isEmpty)

            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "dp"])
            #expect(login.status == 0, "\(login.stderr)")
            let lines = login.stderr.split(separator: "\n").filter { $0.contains("takes only DPoP-bound tokens") }
            #expect(lines.count == 1 && lines[0].contains("as --dpop"), "\(login.stderr)")
            let stored = try #require(try sandbox.storedLogin("dp"))
            #expect(stored.dpopKey != nil && stored.tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame)
            #expect(stored.resource == provider.resourceURL)
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/dp.json", encoding: .utf8)
            #expect(profile.contains(#""dpop" : true"#), "\(profile)")

            let request = try await sandbox.run(["request", provider.resourceURL, "--profile", "dp"])
            #expect(request.status == 0 && request.stderr.contains("HTTP 200"), "\(request.stderr)")
            let again = try await sandbox.run(["login", "--profile", "dp"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(!again.stderr.contains("takes only DPoP-bound tokens"), "the profile remembers DPoP: \(again.stderr)")
            let refreshed = try await sandbox.run(["refresh", "--profile", "dp"])
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(try sandbox.storedLogin("dp")?.dpopKey != nil)
            LoginCommandTests.expectNoSecret(login.stderr + request.stderr, try sandbox.storedLogin("dp")?.tokens, "the DPoP login")
        }
    }

    @Test("a kept registration the server forgot: found by reading it (RFC 7592) before the browser opens, registered anew on the same port, said once; the login succeeds")
    func forgottenRegistrationRead() async throws {
        try await withTestProvider(ResourceLoginCommandTests.configuration) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(first.status == 0, "\(first.stderr)")
            let old = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            let again = try await sandbox.run(["login", "--profile", "mcp"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(await provider.registrationReadCount() == 1)
            #expect(!again.stderr.contains("no longer knows"), "\(again.stderr)")

            await provider.forgetRegistrations()
            let login = try await sandbox.run(["login", "--profile", "mcp", "--timeout", "30"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("no longer knows the client registered earlier") && login.stderr.contains("registered anew"), "\(login.stderr)")
            let new = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            #expect(new.clientID != old.clientID && new.callbackPort == old.callbackPort)
            #expect(try sandbox.storedLogin("mcp")?.clientID == new.clientID)
            #expect(await provider.registrationCount() == 2)
            ResourceLoginCommandTests.expectNothingSecret(login.stderr, new, try sandbox.storedLogin("mcp"), "the login after the read")
            ResourceLoginCommandTests.expectNothingSecret(login.stderr, old, nil, "the login after the read")
        }
    }

    @Test("a forgotten registration that cannot be read (no registration access token): the timed-out login (exit 3) says the server may have forgotten it and names --new-registration, which works")
    func forgottenRegistrationTimeout() async throws {
        var configuration = ResourceLoginCommandTests.configuration
        configuration.registration?.issuesRegistrationAccessToken = false
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(first.status == 0, "\(first.stderr)")
            await provider.forgetRegistrations()
            let login = try await sandbox.run(["login", "--profile", "mcp", "--timeout", "\(TestTime.scaled(2))"])
            #expect(login.status == 3, "\(login.stderr)")
            #expect(login.stderr.contains("may have forgotten the client"), "\(login.stderr)")
            let line = try #require(login.stderr.split(separator: "\n").first { $0.contains("oidc: error:") })
            let command = try #require(line.range(of: "oidc login --profile mcp").map { String(line[$0.lowerBound...]) })
            #expect(command == "oidc login --profile mcp --new-registration", "\(command)")

            var environment = sandbox.environment()
            environment["PATH"] = OIDCBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let fixed = try await CLIReferenceTests.shell(command, environment: environment)
            #expect(fixed.status == 0, "\(fixed.stderr)")
            #expect(await provider.registrationCount() == 2)
            // A login with a given client id that times out says nothing of registrations.
            let given = try await sandbox.run(["login", "--resource", provider.resourceURL, "--client-id", "test-client", "--no-browser", "--timeout", "\(TestTime.scaled(1))", "--profile", "given"])
            #expect(given.status == 3, "\(given.stderr)")
            #expect(!given.stderr.contains("--new-registration"), "\(given.stderr)")
        }
    }

    @Test("--resource --flow device at a plain OAuth server (RFC 8414 only, no ID token): registered with the device grant, resource on the device request and the polls, kept without a subject, refreshed with resource")
    func deviceFlowPlainOAuth() async throws {
        var configuration = ResourceLoginCommandTests.configuration
        configuration.deviceFlow = .init(expiresIn: 120, interval: 1)
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            async let approved = DeviceLoginCommandTests.decide(provider)
            let login = try await sandbox.run(
                ["login", "--resource", provider.resourceURL, "--flow", "device", "--profile", "tv"], extra: DeviceLoginCommandTests.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("no ID token (a plain OAuth server)"), "\(login.stderr)")
            let device = try #require(await provider.requestParameters(.deviceAuthorization).last)
            #expect(device["resource"] == provider.resourceURL && device["scope"] == "read", "\(device)")
            let poll = try #require(await provider.tokenRequestParameters().last { $0["grant_type"]?.hasSuffix("device_code") == true })
            #expect(poll["resource"] == provider.resourceURL)
            let stored = try #require(try sandbox.storedLogin("tv"))
            #expect(stored.resource == provider.resourceURL && stored.subject == nil && stored.tokens.idToken == nil)
            #expect(stored.tokens.scopes == ["read"])
            let registration = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            #expect(stored.clientID == registration.clientID)
            #expect(await provider.registeredGrantTypes(of: registration.clientID)?.contains("urn:ietf:params:oauth:grant-type:device_code") == true)
            let request = try await sandbox.run(["request", provider.resourceURL, "--profile", "tv"])
            #expect(request.status == 0 && request.stderr.contains("HTTP 200"), "\(request.stderr)")
            let refreshed = try await sandbox.run(["refresh", "--profile", "tv"])
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)
            let status = try await sandbox.run(["status", "--profile", "tv"])
            #expect(status.status == 0 && status.stdout.contains("  resource:    \(provider.resourceURL)"), "\(status.stdout)")
            // No ID token there: the advice is the one that works for each output.
            let idToken = try await sandbox.run(["token", "--profile", "tv", "--output", "id-token"])
            #expect(idToken.status == 4 && idToken.stderr.contains("plain OAuth server"), "\(idToken.stderr)")
            #expect(idToken.stderr.contains("use oidc token --profile tv") && !idToken.stderr.contains("--token-type"), "\(idToken.stderr)")
            let exec = try await sandbox.run(["token", "--profile", "tv", "--output", "exec-credential", "--token-type", "id"])
            #expect(exec.status == 4 && exec.stderr.contains("use --token-type access"), "\(exec.stderr)")
        }
    }

    @Test("the registered callback port taken by another program: exit 2 naming the port, why it is fixed and what to do; the advised --new-registration --listen 127.0.0.1:0 registers on a free port, and later logins use it")
    func registeredPortTaken() async throws {
        try await withTestProvider(ResourceLoginCommandTests.configuration) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "mcp"])
            #expect(first.status == 0, "\(first.stderr)")
            let old = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            let port = try #require(old.callbackPort)
            let holder = try await LoopbackRedirectListener.start(
                LoopbackRedirectListener.Configuration(endpoints: [try LoopbackRedirectListener.Endpoint(parsing: "127.0.0.1:\(port)")]))
            let taken = try await sandbox.run(["login", "--profile", "mcp"])
            #expect(taken.status == 2, "\(taken.stderr)")
            let line = try #require(taken.stderr.split(separator: "\n").first { $0.contains("oidc: error:") })
            #expect(line.contains("Port \(port) on 127.0.0.1 is in use") && line.contains("redirect URI on that port"), "\(line)")
            let command = try #require(line.range(of: "oidc login --profile mcp").map { String(line[$0.lowerBound...]) })
            #expect(command == "oidc login --profile mcp --new-registration --listen 127.0.0.1:0", "\(command)")

            var environment = sandbox.environment()
            environment["PATH"] = OIDCBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let fixed = try await CLIReferenceTests.shell(command, environment: environment)
            #expect(fixed.status == 0, "\(fixed.stderr)")
            let new = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            #expect(new.clientID != old.clientID && new.callbackPort != nil && new.callbackPort != port)
            let later = try await sandbox.run(["login", "--profile", "mcp"])
            #expect(later.status == 0, "\(later.stderr)")
            #expect(await provider.requestParameters(.authorize).last?["redirect_uri"] == "http://127.0.0.1:\(new.callbackPort ?? 0)/callback")
            #expect(await provider.registrationCount() == 2)
            await holder.close()
        }
    }

    @Test("oidc provider --registration --plain-oauth --resource-requires-dpop: its resource, named on stderr, takes a login with no issuer and no client id, DPoP-bound and without a subject")
    func embeddedProviderForResource() async throws {
        let (process, issuer) = try await ProviderAndMintCommandTests.startProvider(["--registration", "--plain-oauth", "--resource-requires-dpop"])
        defer { process.signal(SIGKILL); _ = process.waitForExit() }
        let resource = issuer + "/resource"
        #expect(try await ProviderAndMintCommandTests.get(issuer + "/.well-known/openid-configuration").0 == 404)
        let sandbox = LoginSandbox()
        let login = try await sandbox.run(["login", "--resource", resource, "--profile", "mcp"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("DPoP on, as --dpop"), "\(login.stderr)")
        let stored = try #require(try sandbox.storedLogin("mcp"))
        #expect(stored.dpopKey != nil && stored.subject == nil && stored.resource == resource)
        let request = try await sandbox.run(["request", resource, "--profile", "mcp"])
        #expect(request.status == 0 && request.stderr.contains("HTTP 200"), "\(request.stderr)")
        process.signal(SIGTERM)
        #expect(await process.exitStatus() == 0)
        let messages = await process.errors()
        #expect(messages.contains("protected resource: \(resource)") && messages.contains(issuer + "/register"), "\(messages)")
    }

    @Test("a device login with a kept registration the server forgot, which cannot be read: the device request's invalid_client makes it register anew and ask for a code once more")
    func deviceFlowForgottenRegistration() async throws {
        var configuration = ResourceLoginCommandTests.configuration
        configuration.deviceFlow = .init(expiresIn: 120, interval: 1)
        configuration.registration?.issuesRegistrationAccessToken = false
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "tv"])
            #expect(first.status == 0, "\(first.stderr)")
            let old = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            await provider.forgetRegistrations()
            async let approved = DeviceLoginCommandTests.decide(provider)
            let login = try await sandbox.run(["login", "--profile", "tv", "--flow", "device"], extra: DeviceLoginCommandTests.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("refused the client registered earlier (invalid_client): registered anew"), "\(login.stderr)")
            let new = try #require(try await ResourceLoginCommandTests.registration(sandbox, provider.issuer))
            #expect(new.clientID != old.clientID && new.callbackPort == old.callbackPort)
            #expect(try sandbox.storedLogin("tv")?.clientID == new.clientID)
            #expect(await provider.registrationCount() == 2)
        }
    }
}
