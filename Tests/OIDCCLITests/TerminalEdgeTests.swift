import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// What a person at the terminal meets first (user trial 5): a mistyped command, a usage error,
/// a server that never answers, a resource that says why it refused, a step-up login.
@Suite("oidc at the terminal: commands, usage, timeouts, refusals, step-up", .timeLimit(.scaledMinutes(3)))
struct TerminalEdgeTests {
    // MARK: F7: mistyped subcommands

    @Test("a mistyped command is named with the nearest one, not blamed on the next option (exit 2)")
    func mistypedCommands() async throws {
        for (typed, meant) in [
            (["tokn", "--profile", "work"], "token"), (["stauts", "--all"], "status"), (["log-in", "--issuer", "https://x.example"], "login"),
            (["tokn"], "token"), (["help", "tokn"], "token"), (["-v", "refersh"], "refresh"),
        ] {
            let result = try await OIDCBinary.run(typed)
            #expect(result.status == 2, "\(typed): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("oidc: error: unknown command '\(typed.first { !$0.hasPrefix("-") && $0 != "help" }!)'; did you mean '\(meant)'?"), "\(typed): \(result.stderr)")
            #expect(!result.stderr.contains("Unknown option"), "\(result.stderr)")
        }
        let unknown = try await OIDCBinary.run(["xyzzy"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown command 'xyzzy'; the commands are: login, token,"), "\(unknown.stderr)")
        // A command's own help, and a known command, are untouched.
        let help = try await OIDCBinary.run(["help", "token"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("oidc token"))
    }

    // MARK: F18: usage errors in oidc's voice, with the command's own usage

    @Test("usage errors say 'oidc: error:' and show the typed command's usage, not the root's")
    func usageErrors() async throws {
        let sandbox = LoginSandbox()
        let bare = try await sandbox.run(["login"])
        #expect(bare.status == 2)
        #expect(bare.stderr.hasPrefix("oidc: error: profile 'default' is unknown"), "\(bare.stderr)")
        #expect(bare.stderr.contains("Usage: oidc login"), "\(bare.stderr)")
        #expect(bare.stderr.contains("See 'oidc login --help'"), "\(bare.stderr)")
        #expect(!bare.stderr.contains("<subcommand>"), "\(bare.stderr)")
        let noClient = try await sandbox.run(["login", "--issuer", "https://login.example.com"])
        #expect(noClient.status == 2)
        #expect(noClient.stderr.hasPrefix("oidc: error: --client-id is required"), "\(noClient.stderr)")
        #expect(noClient.stderr.contains("Usage: oidc login"), "\(noClient.stderr)")
        // The parser's own errors too: one prefix, and its suggestion kept.
        let typo = try await sandbox.run(["login", "--isuer", "https://login.example.com"])
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("oidc: error: Unknown option '--isuer'"), "\(typo.stderr)")
        #expect(typo.stderr.contains("Did you mean '--issuer'?"), "\(typo.stderr)")
        #expect(!typo.stderr.contains("Error: "), "\(typo.stderr)")
    }

    // MARK: F5: a server that never answers

    /// A port that accepts connections (the kernel completes them into the listen backlog) and
    /// never answers: what a hung provider looks like to a client (`RefreshKillTests.Tarpit`).
    typealias SilentServer = RefreshKillTests.Tarpit

    @Test("a provider that never answers: the message names the time waited and how to wait longer, by flag and by OIDC_HTTP_TIMEOUT")
    func silentProvider() async throws {
        let silent = try SilentServer()
        let silentURL = "http://127.0.0.1:\(silent.port)"
        let sandbox = LoginSandbox()
        let discover = try await sandbox.run(["discover", silentURL, "--timeout", "1"])
        #expect(discover.status == 5, "\(discover.stderr)")
        #expect(discover.stderr.contains("did not answer within 1 s"), "\(discover.stderr)")
        #expect(discover.stderr.contains("--timeout SECONDS or OIDC_HTTP_TIMEOUT=SECONDS"), "\(discover.stderr)")
        // The login's discovery: bounded by OIDC_HTTP_TIMEOUT, and by the login's own --timeout.
        let byEnvironment = try await sandbox.run(
            ["login", "--issuer", silentURL, "--client-id", "c", "--no-browser", "--profile", "hang"], extra: ["OIDC_HTTP_TIMEOUT": "1"])
        #expect(byEnvironment.status == 5, "\(byEnvironment.stderr)")
        #expect(byEnvironment.stderr.contains("did not answer within 1 s"), "\(byEnvironment.stderr)")
        #expect(byEnvironment.stderr.contains("give OIDC_HTTP_TIMEOUT=SECONDS"), "\(byEnvironment.stderr)")
        let byLoginTimeout = try await sandbox.run(["login", "--issuer", silentURL, "--client-id", "c", "--no-browser", "--timeout", "2", "--profile", "hang"])
        #expect(byLoginTimeout.status == 5, "\(byLoginTimeout.stderr)")
        #expect(byLoginTimeout.stderr.contains("did not answer within 2 s"), "\(byLoginTimeout.stderr)")
        #expect(byLoginTimeout.stderr.contains("give a longer --timeout"), "\(byLoginTimeout.stderr)")
        let request = try await sandbox.run(["request", silentURL + "/x", "--allow-host", "127.0.0.1"])
        #expect(request.status == 4, "no login: \(request.stderr)")
        let bad = try await sandbox.run(["discover", silentURL], extra: ["OIDC_HTTP_TIMEOUT": "soon"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("OIDC_HTTP_TIMEOUT must be whole seconds"), "\(bad.stderr)")
    }

    @Test("oidc token at a token endpoint that never answers: 10 s by default is stated; --timeout and OIDC_HTTP_TIMEOUT shorten it")
    func silentTokenEndpoint() async throws {
        let silent = try SilentServer()
        let silentURL = "http://127.0.0.1:\(silent.port)"
        let sandbox = LoginSandbox()
        let injected = try await sandbox.run(
            ["inject", "--issuer", "https://login.example.com", "--client-id", "c", "--token-endpoint", silentURL + "/token",
             "--access-token", "AT-old", "--refresh-token", "RT-old", "--expires-in=-10", "--profile", "hang"])
        #expect(injected.status == 0, "\(injected.stderr)")
        let flag = try await sandbox.run(["token", "--profile", "hang", "--timeout", "1"])
        #expect(flag.status == 5, "\(flag.stderr)")
        #expect(flag.stderr.contains("did not answer within 1 s"), "\(flag.stderr)")
        #expect(flag.stderr.contains("--timeout SECONDS or OIDC_HTTP_TIMEOUT"), "\(flag.stderr)")
        let environment = try await sandbox.run(["token", "--profile", "hang"], extra: ["OIDC_HTTP_TIMEOUT": "1"])
        #expect(environment.status == 5, "\(environment.stderr)")
        #expect(environment.stderr.contains("did not answer within 1 s"), "\(environment.stderr)")
        // The unreachable provider keeps the login.
        #expect(try sandbox.storedLogin("hang") != nil)
        let help = try await sandbox.run(["token", "--help"])
        #expect(help.stdout.contains("default: $OIDC_HTTP_TIMEOUT, else 10"), "\(help.stdout)")
    }

    // MARK: F2: the resource's reason

    @Test("a 401 a fresh token does not cure quotes the resource's reason and names the --resource login its metadata points to")
    func refusedTokenSaysWhy() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "work"])
            #expect(login.status == 0, "\(login.stderr)")
            // The provider's /resource takes only tokens issued for it (RFC 8707): a plain login's is not.
            let refused = try await sandbox.run(["request", provider.issuer + "/resource", "--profile", "work"])
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("HTTP 401"))
            #expect(refused.stderr.contains("401: invalid_token (\"The access token was not issued for this resource (RFC 8707).\")"), "\(refused.stderr)")
            let hinted = "oidc login --profile work-127.0.0.1-\(provider.port) --resource '\(provider.issuer)/resource' --client-id 'test-client'"
            #expect(refused.stderr.contains(hinted), "\(refused.stderr)")
            let stored = try #require(try sandbox.storedLogin("work"))
            #expect(!refused.stderr.contains(stored.tokens.accessToken.revealedValue))
            // The hint, run as printed, gets a token the resource takes; the first login stays.
            var environment = sandbox.environment()
            environment["PATH"] = OIDCBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let followed = try await CLIReferenceTests.shell(hinted, environment: environment)
            #expect(followed.status == 0, "\(followed.stderr)")
            let served = try await sandbox.run(["request", provider.issuer + "/resource", "--profile", "work-127.0.0.1-\(provider.port)"])
            #expect(served.status == 0, "\(served.stderr)")
            #expect(try sandbox.storedLogin("work")?.tokens.refreshToken == stored.tokens.refreshToken)
        }
    }

    @Test("oidc resource-server whose --audience is not its URL says so at start; a --resource login refused there is told no login would help, not sent round again")
    func audienceNotTheURL() async throws {
        try await withTestProvider { provider in
            let server = try await ResourceServerProcess.start(["--issuer", provider.issuer, "--audience", "https://api.example.com", "--port", "0"])
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", server.base, "--client-id", "test-client", "--profile", "api"])
            #expect(login.status == 0, "\(login.stderr)")
            let refused = try await sandbox.run(["request", server.base + "/me", "--profile", "api"])
            let stopped = await server.stop()
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("is for this resource already"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("oidc login --profile"), "\(refused.stderr)")
            #expect(stopped.stderr.contains("the audience is not this server's URL"), "\(stopped.stderr)")
            #expect(stopped.stderr.contains("--param resource=https://api.example.com"), "\(stopped.stderr)")
        }
    }

    @Test("a 403 that is not a step-up has its reason quoted (here from the JSON body, the challenge having none); control characters show as '?'")
    func forbiddenSaysWhy() async throws {
        try await withTestProvider { provider in
            let api = try await LoopbackHTTPService.start(host: "127.0.0.1", port: 0, maximumBodySize: 1024) { _ in
                LoopbackHTTPService.Response(
                    status: 403,
                    headers: [("WWW-Authenticate", "Bearer error=\"insufficient_user_authentication\""), ("Content-Type", "application/json")],
                    body: Array(#"{"error":"insufficient_user_authentication","error_description":"A stronger login is needed\u001b[2J."}"#.utf8))
            }
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "work"])
            #expect(login.status == 0, "\(login.stderr)")
            let refused = try await sandbox.run(["request", "http://127.0.0.1:\(api.port)/x", "--allow-host", "127.0.0.1", "--profile", "work"])
            try await api.shutdown()
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stdout.hasPrefix(#"{"error":"insufficient_user_authentication""#))
            #expect(refused.stderr.contains("refused the request (403: insufficient_user_authentication (\"A stronger login is needed?[2J.\"))"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("\u{1B}"))
        }
    }

    // MARK: Step-up: the union of the kept and the new scopes

    @Test("oidc login --profile P --scope X on a profile that asks for Y asks for Y and X; --reset for X alone")
    func stepUpUnion() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--scope", "openid profile", "--profile", "work"])
            #expect(first.status == 0, "\(first.stderr)")
            let more = try await sandbox.run(["login", "--profile", "work", "--scope", "email"])
            #expect(more.status == 0, "\(more.stderr)")
            let profile = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sandbox.profileDirectory + "/work.json"))) as? [String: Any])
            #expect(profile["scopes"] as? [String] == ["openid", "profile", "email"])
            let granted = try #require(try sandbox.storedLogin("work")).tokens.scopes
            #expect(Set(granted).isSuperset(of: ["openid", "profile", "email"]), "\(granted)")
            let reset = try await sandbox.run(["login", "--profile", "work", "--reset", "--issuer", provider.issuer, "--client-id", "test-client", "--scope", "openid"])
            #expect(reset.status == 0, "\(reset.stderr)")
            let narrowed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sandbox.profileDirectory + "/work.json"))) as? [String: Any])
            #expect(narrowed["scopes"] as? [String] == ["openid"])
        }
    }

    // MARK: F17: names stored by an older version

    @Test("F17: a login stored under a name with an escape sequence (an older version took any name) is listed with '?' by status --all and logout --all")
    func storedEscapeName() async throws {
        let sandbox = LoginSandbox()
        let injected = try await sandbox.run(
            ["inject", "--issuer", "https://login.example.com", "--client-id", "c", "--access-token", "AT-1", "--expires-in", "3600", "--profile", "plain"])
        #expect(injected.status == 0, "\(injected.stderr)")
        // The file an older version wrote for the name "esc<ESC>[2Jx": the name percent-encoded byte by byte.
        let store = URL(fileURLWithPath: sandbox.store)
        try FileManager.default.copyItem(at: store.appendingPathComponent("oidc@plain.json"), to: store.appendingPathComponent("oidc@esc%1B%5B2%4Ax.json"))
        let status = try await sandbox.run(["status", "--all"])
        #expect(status.stdout.contains("profile esc?[2Jx:"), "\(status.stdout)")
        #expect(!status.stdout.contains("\u{1B}") && !status.stderr.contains("\u{1B}"))
        let logout = try await sandbox.run(["logout", "--all"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stderr.contains("logged out profile 'esc?[2Jx'"), "\(logout.stderr)")
        #expect(!logout.stderr.contains("\u{1B}"))
    }

    // MARK: The nearest command

    @Test("the nearest command: dashes and case folded, a transposition counts one, a beginning, nothing far offered")
    func nearest() async throws {
        for (typed, meant) in [("LOG_IN", "login"), ("stauts", "status"), ("disc", "discover"), ("banana", nil as String?)] {
            let result = try await OIDCBinary.run([typed])
            #expect(result.status == 2)
            let suggested = result.stderr.range(of: "did you mean '").map { String(result.stderr[$0.upperBound...].prefix { $0 != "'" }) }
            #expect(suggested == meant, "\(typed): \(result.stderr)")
        }
    }
}
