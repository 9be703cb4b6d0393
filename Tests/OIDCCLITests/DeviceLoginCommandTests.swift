import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --flow device` (RFC 8628) and `--flow auto`, run as the built binary against
/// TestProvider over loopback HTTP; the test plays the user, approving the code the provider holds.
@Suite("oidc login --flow device", .timeLimit(.scaledMinutes(3)))
struct DeviceLoginCommandTests {
    static func deviceProvider(expiresIn: Int = 120, _ body: (TestProvider) async throws -> Void) async throws {
        var configuration = TestProvider.Configuration()
        configuration.deviceFlow = .init(expiresIn: expiresIn, interval: 1)
        try await withTestProvider(configuration, body)
    }

    static func arguments(_ provider: TestProvider, _ more: [String] = []) -> [String] {
        ["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "tv"] + more
    }

    /// No browser anywhere: no `$BROWSER`, no display, no SSH session unless a test sets one.
    static let headless = ["BROWSER": "", "DISPLAY": "", "WAYLAND_DISPLAY": "", "SSH_CONNECTION": "", "SSH_TTY": ""]

    /// Waits (bounded) for the provider to hand out a user code, then decides it.
    static func decide(_ provider: TestProvider, approve: Bool = true) async throws -> String {
        for _ in 0..<300 {
            if let code = await provider.pendingDeviceUserCodes().first {
                if approve { await provider.approveDeviceLogin(userCode: code) } else { await provider.denyDeviceLogin(userCode: code) }
                return code
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("no device login was started")
        return ""
    }

    @Test("--flow device --qr: the page, the code and the link verbatim on stderr, a QR code that scans to the link; approved: stored, remembered, stdout empty")
    func deviceWithQRCode() async throws {
        try await Self.deviceProvider { provider in
            let sandbox = LoginSandbox()
            async let approved = Self.decide(provider)
            let login = try await sandbox.run(Self.arguments(provider, ["--flow", "device", "--qr", "-vv"]), extra: Self.headless)
            let code = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            let lines = login.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.contains("oidc:     \(provider.deviceVerificationURI)"))
            #expect(lines.contains("oidc:     \(code)"))
            let complete = provider.deviceVerificationURI + "?user_code=" + code
            #expect(lines.contains("oidc:     \(complete)"))
            #expect(try await QRScan.decode(stderrLines: lines) == complete)
            #expect(login.stderr.contains("logged in as test-user at \(provider.issuer) (profile 'tv')"))
            // Neither the device code nor a token, at -vv.
            let poll = try #require(await provider.tokenRequestParameters().last { $0["grant_type"]?.hasSuffix("device_code") == true })
            let deviceCode = try #require(poll["device_code"])
            #expect(!login.stderr.contains(deviceCode))
            let stored = try #require(try sandbox.storedLogin("tv"))
            LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
            #expect(stored.subject == "test-user" && stored.tokens.refreshToken != nil)
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/tv.json", encoding: .utf8)
            #expect(profile.contains(#""flow" : "device""#), "\(profile)")
            // The profile remembers the flow: the next login needs no flag.
            async let again = Self.decide(provider)
            let second = try await sandbox.run(["login", "--profile", "tv"], extra: Self.headless)
            _ = try await again
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stderr.contains("enter the code"))
        }
    }

    @Test("a device grant that sends no ID token (django-oauth-toolkit 3.4): the login is kept without a subject, status says why, token prints, a refresh works")
    func noIDToken() async throws {
        var configuration = TestProvider.Configuration()
        configuration.deviceFlow = .init(expiresIn: 120, interval: 1, issuesIDTokens: false)
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            async let approved = Self.decide(provider)
            let login = try await sandbox.run(Self.arguments(provider, ["--flow", "device", "--scope", "openid"]), extra: Self.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(!login.stderr.contains("'openid' scope"), "\(login.stderr)")
            #expect(login.stderr.contains("with no ID token (the provider's device grant sent none)"), "\(login.stderr)")
            let stored = try #require(try sandbox.storedLogin("tv"))
            #expect(stored.subject == nil && stored.tokens.idToken == nil && stored.tokens.refreshToken != nil)

            let status = try await sandbox.run(["status", "--profile", "tv"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(status.stdout.contains("no ID token (the provider's device grant sent none)"), "\(status.stdout)")
            let json = try await sandbox.run(["status", "--profile", "tv", "--output", "json"])
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(entry["no_id_token"] as? String == "the provider's device grant sent none" && entry["subject"] == nil, "\(json.stdout)")
            #expect(entry["grant_type"] as? String == "urn:ietf:params:oauth:grant-type:device_code" && entry["refreshable"] as? Bool == true)

            let token = try await sandbox.run(["token", "--profile", "tv"])
            #expect(token.status == 0 && token.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == stored.tokens.accessToken.revealedValue)
            let idToken = try await sandbox.run(["token", "--profile", "tv", "--output", "id-token"])
            #expect(idToken.status == 4 && idToken.stderr.contains("device grant sent none"), "\(idToken.stderr)")

            let refresh = try await sandbox.run(["refresh", "--profile", "tv"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            let refreshed = try #require(try sandbox.storedLogin("tv"))
            #expect(refreshed.tokens.accessToken != stored.tokens.accessToken)
            let request = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "tv"])
            #expect(request.status == 0, "\(request.stderr)")
            let after = try await sandbox.run(["status", "--profile", "tv"])
            #expect(after.stdout.contains("logged in"), "\(after.stdout)")
        }
    }

    @Test("a browser named with --flow device opens verification_uri_complete, where the user approves")
    func namedBrowserOpensTheLink() async throws {
        try await Self.deviceProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(Self.arguments(provider, ["--flow", "device"]))
            #expect(login.status == 0, "\(login.stderr)")
            #expect(sandbox.log.contains("200 /device"), "\(sandbox.log)")
        }
    }

    @Test("--flow auto: the device flow in an SSH session with no browser named, and with no display; the browser when one is named")
    func autoChooses() async throws {
        try await Self.deviceProvider { provider in
            let sandbox = LoginSandbox()
            var ssh = Self.headless
            ssh["SSH_CONNECTION"] = "127.0.0.1 50000 127.0.0.1 22"
            ssh["DISPLAY"] = ":0"  // a forwarded display does not make the browser usable here
            async let first = Self.decide(provider)
            let overSSH = try await sandbox.run(Self.arguments(provider), extra: ssh)
            _ = try await first
            #expect(overSSH.status == 0, "\(overSSH.stderr)")
            #expect(overSSH.stderr.contains("an SSH session with no browser named"), "\(overSSH.stderr)")
            #expect(overSSH.stderr.contains("enter the code"))

            async let second = Self.decide(provider)
            let noDisplay = try await sandbox.run(Self.arguments(provider, ["--reset"]), extra: Self.headless)
            _ = try await second
            #expect(noDisplay.status == 0, "\(noDisplay.stderr)")
            #expect(noDisplay.stderr.contains("no browser here"))

            // $BROWSER names one (the test browser), in an SSH session too: the loopback login.
            var named = ssh
            named["BROWSER"] = sandbox.browser()
            let browser = try await sandbox.run(Self.arguments(provider, ["--reset"]), extra: named)
            #expect(browser.status == 0, "\(browser.stderr)")
            #expect(browser.stderr.contains("in your browser: http://127.0.0.1:"))
            #expect(!browser.stderr.contains("enter the code"))
        }
    }

    @Test("exit codes: denied 4, expired 3, --timeout 3, unreachable 5, no device endpoint 2; nothing stored")
    func exitCodes() async throws {
        try await Self.deviceProvider { provider in
            let sandbox = LoginSandbox()
            async let refused = Self.decide(provider, approve: false)
            let denied = try await sandbox.run(Self.arguments(provider, ["--flow", "device"]), extra: Self.headless)
            _ = try await refused
            #expect(denied.status == 4, "\(denied.stderr)")
            #expect(denied.stderr.contains("access_denied"))
            #expect(try sandbox.storedLogin("tv") == nil)
        }
        // Codes that expire after the --timeout below, both on the one scale.
        try await Self.deviceProvider(expiresIn: TestTime.scaled(3)) { provider in
            let sandbox = LoginSandbox()
            let device = Self.arguments(provider, ["--flow", "device"])
            let expired = try await sandbox.run(device, extra: Self.headless)
            #expect(expired.status == 3, "\(expired.stderr)")

            let timedOut = try await sandbox.run(device + ["--timeout", "\(TestTime.scaled(1))"], extra: Self.headless)
            #expect(timedOut.status == 3, "\(timedOut.stderr)")
            #expect(timedOut.stderr.contains("--timeout \(TestTime.scaled(1)) s"))

            #expect(try sandbox.storedLogin("tv") == nil)
        }
        try await Self.deviceProvider { provider in
            await provider.failNextTokenRequests(3, with: .htmlError(status: 502))
            let sandbox = LoginSandbox()
            let unreachable = try await sandbox.run(Self.arguments(provider, ["--flow", "device"]), extra: Self.headless)
            #expect(unreachable.status == 5, "\(unreachable.stderr)")
            #expect(unreachable.stderr.contains("Trying again in"))
            #expect(try sandbox.storedLogin("tv") == nil)
        }
        // An ID token that fails its checks (a provider clock two hours ahead): exit 4, nothing stored.
        var ahead = TestProvider.Configuration()
        ahead.deviceFlow = .init(interval: 1)
        ahead.clockOffset = 7200
        try await withTestProvider(ahead) { provider in
            let sandbox = LoginSandbox()
            async let approved = Self.decide(provider)
            let failed = try await sandbox.run(Self.arguments(provider, ["--flow", "device"]), extra: Self.headless)
            _ = try await approved
            #expect(failed.status == 4 && failed.stderr.contains("iat"), "\(failed.stderr)")
            #expect(try sandbox.storedLogin("tv") == nil)
        }
        var unlisted = TestProvider.Configuration()
        unlisted.deviceFlow = .init(interval: 1, advertised: false)
        try await withTestProvider(unlisted) { provider in
            let sandbox = LoginSandbox()
            let none = try await sandbox.run(Self.arguments(provider, ["--flow", "device"]), extra: Self.headless)
            #expect(none.status == 2, "\(none.stderr)")
            #expect(none.stderr.contains("--device-authorization-endpoint"))
            // auto, with no device endpoint known: the browser flow (which has none to open here: timed out).
            let auto = try await sandbox.run(Self.arguments(provider, ["--timeout", "\(TestTime.scaled(1))"]), extra: Self.headless)
            #expect(auto.status == 3 && auto.stderr.contains("no browser to open here"), "\(auto.stderr)")
            // Given by hand, it is used, and remembered.
            async let approved = Self.decide(provider)
            let given = try await sandbox.run(
                Self.arguments(provider, ["--flow", "device", "--device-authorization-endpoint", provider.deviceAuthorizationEndpoint]), extra: Self.headless)
            _ = try await approved
            #expect(given.status == 0, "\(given.stderr)")
            #expect(try String(contentsOfFile: sandbox.profileDirectory + "/tv.json", encoding: .utf8).contains("device_authorization_endpoint"))
        }
    }

    @Test("Ctrl-C while the device flow waits exits 130")
    func interrupted() async throws {
        try await Self.deviceProvider { provider in
            let sandbox = LoginSandbox()
            let result = try await OIDCBinary.run(
                Self.arguments(provider, ["--flow", "device"]), environment: sandbox.environment(extra: Self.headless), timeout: .scaled(.seconds(30)),
                started: { process in
                    // Waiting for the user's approval: the device authorization request has come.
                    awaitEvent { await provider.requestCount(.deviceAuthorization) > 0 }
                    process.interrupt()
                }
            )
            #expect(result.status == 130, "\(result.stderr)")
            #expect(try sandbox.storedLogin("tv") == nil)
        }
    }
}

/// Reads the QR code `oidc login --qr` drew on stderr (no terminal: no colours; `▀`, `▄`, `█` and
/// spaces, two module rows per line) back into modules, and has zbar decode it from an image.
enum QRScan {
    static func decode(stderrLines lines: [String]) async throws -> String? {
        guard let start = lines.firstIndex(where: { $0.contains("scan this QR code") }),
            let end = lines[start...].firstIndex(where: { $0.hasPrefix("oidc: waiting") })
        else { return nil }
        let rows = lines[(start + 1)..<end]
        var modules: [[Bool]] = []
        for line in rows {
            var top: [Bool] = [], bottom: [Bool] = []
            for character in line {
                top.append(character == "▀" || character == "█")
                bottom.append(character == "▄" || character == "█")
            }
            modules += [top, bottom]
        }
        // A PBM image, each module 4×4 pixels, for zbarimg.
        let scale = 4
        let width = (modules.map(\.count).max() ?? 0) * scale
        var image = "P1\n\(width) \(modules.count * scale)\n"
        for row in modules {
            let pixels = row.flatMap { Array(repeating: $0 ? "1" : "0", count: scale) }.joined(separator: " ")
            for _ in 0..<scale { image += pixels + "\n" }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pbm")
        try image.write(to: file, atomically: true, encoding: .ascii)
        defer { try? FileManager.default.removeItem(at: file) }
        // posix_spawn (CommandRunner), not Foundation's Process, which can crash a test process with many descriptors open.
        let zbar = try await OIDCBinary.run(["--raw", "-q", file.path], timeout: .scaled(.seconds(30)), executable: URL(fileURLWithPath: "/usr/bin/zbarimg"))
        #expect(zbar.status == 0, "zbarimg: \(zbar.stderr)")
        return zbar.stdout.trimmingCharacters(in: .newlines)
    }
}
