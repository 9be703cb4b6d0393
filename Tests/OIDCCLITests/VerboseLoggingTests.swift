import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc -v`/`-vv` and `OIDC_LOG`, run as the built binary against TestProvider: the log goes to
/// stderr one line per event, stdout is unchanged, and no line holds a secret of the run.
@Suite("oidc --verbose and OIDC_LOG", .timeLimit(.scaledMinutes(3)))
struct VerboseLoggingTests {
    static let clientID = "cli-log-client"

    /// A log line: `2026-11-23T18:50:00.123Z debug oidc.session: message key=value …`.
    static func isLogLine(_ line: Substring) -> Bool {
        line.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (trace|debug|info|notice|warning|error|critical) oidc\.[a-z]+: .+/) != nil
    }

    static func logLines(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter(isLogLine)
    }

    static func tokens(_ login: StoredLogin?) -> [String] {
        guard let tokens = login?.tokens else { return [] }
        return [tokens.accessToken, tokens.refreshToken, tokens.idToken].compactMap { $0?.revealedValue }
    }

    @Test("oidc -vv login, then -vv request (a refresh on 401), -v refresh (rejected: logged out) and -vv logout: trace lines on stderr, none with a token, code, PKCE verifier, state, nonce or the client secret; stdout as without -v")
    func verboseLoginHasNoSecret() async throws {
        let clientSecret = "cli-client-secret-" + UUID().uuidString
        let client = TestProvider.Client.confidential(id: Self.clientID, secret: clientSecret)
        let configuration = TestProvider.Configuration(clients: [client], authorizeBehaviour: .loginPage)
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = sandbox.root.appendingPathComponent("client-secret").path
            try Data(clientSecret.utf8).write(to: URL(fileURLWithPath: secretFile))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile)
            let browserSecrets = sandbox.root.appendingPathComponent("browser-secrets").path
            var secrets = [clientSecret, Data("\(Self.clientID):\(clientSecret)".utf8).base64EncodedString()]
            var stderr: [String: String] = [:]

            let login = try await sandbox.run(
                ["-vv", "login", "--issuer", provider.issuer, "--client-id", Self.clientID, "--client-secret-file", secretFile,
                 "--scope", "openid", "--scope", "offline_access", "--profile", "work", "--allow-host", "127.0.0.1"],
                browser: ["--secrets", browserSecrets]
            )
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            stderr["login"] = login.stderr
            let first = try #require(try sandbox.storedLogin("work"))
            secrets += Self.tokens(first)
            let seen = try String(contentsOfFile: browserSecrets, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(seen.count >= 4, "code, state and nonce of the login: \(seen)")  // authorize: state, nonce; callback: code, state
            secrets += seen

            // A request whose token the resource refuses: a refresh, then the retry.
            await provider.expireAccessTokens()
            let request = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work", "-vv"])
            #expect(request.status == 0, "\(request.stderr)")
            #expect(request.stdout.contains("test-user"))
            stderr["request"] = request.stderr
            let second = try #require(try sandbox.storedLogin("work"))
            secrets += Self.tokens(second)

            // stdout is the same with and without logging.
            let quiet = try await sandbox.run(["token", "--profile", "work"])
            let loud = try await sandbox.run(["token", "--profile", "work", "-vv"])
            #expect(quiet.stdout == second.tokens.accessToken.revealedValue + "\n")
            #expect(loud.stdout == quiet.stdout)
            #expect(quiet.stderr.isEmpty)
            stderr["token"] = loud.stderr

            // A logout that revokes, then a login again and a refresh the provider rejects.
            let logout = try await sandbox.run(["-vv", "logout", "--profile", "work"])
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(await provider.requestCount(.revocation) == 1)
            stderr["logout"] = logout.stderr
            let again = try await sandbox.run(["login", "--profile", "work", "-v"], browser: ["--secrets", browserSecrets])
            #expect(again.status == 0, "\(again.stderr)")
            stderr["login again"] = again.stderr
            secrets += Self.tokens(try sandbox.storedLogin("work"))
            secrets += try String(contentsOfFile: browserSecrets, encoding: .utf8).split(separator: "\n").map(String.init)
            await provider.failNextTokenRequests(1, with: .invalidGrant)
            let rejected = try await sandbox.run(["refresh", "--profile", "work", "-v"])
            #expect(rejected.status == 4, "\(rejected.stderr)")
            #expect(try sandbox.storedLogin("work") == nil)
            stderr["rejected refresh"] = rejected.stderr

            // What the CLI posted to the token endpoint: both logins' PKCE verifiers, the codes and
            // the refresh tokens it presented.
            let sent = await provider.tokenRequestParameters()
            let verifiers = sent.compactMap { $0["code_verifier"] }
            #expect(verifiers.count == 2, "one verifier per login: \(sent.map { $0.keys.sorted() })")
            #expect(verifiers.allSatisfy { $0.count >= 43 })
            secrets += verifiers
            secrets += sent.flatMap { [$0["code"], $0["refresh_token"], $0["client_secret"]].compactMap { $0 } }

            for (step, text) in stderr {
                #expect(!Self.logLines(text).isEmpty, "\(step): no log line")
                for secret in Set(secrets) where secret.count >= 8 {
                    #expect(!text.contains(secret), "\(step): a secret of the run is on stderr")
                }
                #expect(!text.contains("Bearer ") && !text.contains("Basic "), "\(step)")
                // Every line is a log line or one of oidc's own messages (`oidc request` prints the status).
                for line in text.split(separator: "\n") {
                    #expect(Self.isLogLine(line) || line.hasPrefix("oidc: ") || line.hasPrefix("HTTP "), "\(step): \(line)")
                }
            }
            let loginLines = Self.logLines(login.stderr)
            #expect(loginLines.contains { $0.contains(" trace oidc.") }, "-vv is trace")
            #expect(loginLines.contains { $0.contains("debug oidc.token: tokens issued") && $0.contains("grant_type=authorization_code") })
            #expect(loginLines.contains { $0.contains("oidc.loopback: callback received with a code") })
            #expect(loginLines.contains { $0.contains("oidc.jwks: ID token verified") })
            #expect(Self.logLines(request.stderr).contains { $0.contains("oidc.session: refreshing tokens") && $0.contains("reason=unauthorized") })
            #expect(Self.logLines(request.stderr).contains { $0.contains("oidc.session: tokens refreshed") })
            #expect(Self.logLines(logout.stderr).contains { $0.contains("oidc.token: token revoked") })
            let rejectedLines = Self.logLines(rejected.stderr)
            #expect(!rejectedLines.contains { $0.contains(" trace ") }, "-v is debug")
            #expect(rejectedLines.contains { $0.contains("notice oidc.session: refresh rejected by the provider; logging out") && $0.contains("oauth_error=invalid_grant") })
            #expect(rejectedLines.contains { $0.contains("notice oidc.session: logged out") && $0.contains("reason=refresh_rejected") })
        }
    }

    @Test("OIDC_LOG=debug|trace logs like -v/-vv and makes oidc token's fast path decline; an unknown value warns and logs nothing; off changes nothing")
    func environment() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let tokens = try await provider.issueTokens()
            let store = try FileKeychain(directory: URL(fileURLWithPath: sandbox.store))
            try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", key: TokenStoreKey(service: "oidc", account: "default"))
            let expected = tokens.accessToken.revealedValue + "\n"

            let plain = try await sandbox.run(["token"], extra: ["OIDC_FAST_PATH": "require"])
            #expect(plain.status == 0 && plain.stdout == expected && plain.stderr.isEmpty)
            let off = try await sandbox.run(["token"], extra: ["OIDC_FAST_PATH": "require", "OIDC_LOG": "off"])
            #expect(off.status == 0 && off.stdout == expected && off.stderr.isEmpty)
            // Logging asked for: the fast path declines, the parser's path answers the same and logs.
            let declined = try await sandbox.run(["token"], extra: ["OIDC_FAST_PATH": "require", "OIDC_LOG": "trace"])
            #expect(declined.status == 98)
            for level in ["debug", "trace", "TRACE"] {
                let logged = try await sandbox.run(["token"], extra: ["OIDC_LOG": level])
                #expect(logged.status == 0)
                #expect(logged.stdout == expected)
                #expect(Self.logLines(logged.stderr).contains { $0.contains("oidc.store: login read") } == (level != "debug"), "\(level): \(logged.stderr)")
                #expect(!logged.stderr.contains(tokens.accessToken.revealedValue))
            }
            let bogus = try await sandbox.run(["token"], extra: ["OIDC_LOG": "verbose"])
            #expect(bogus.status == 0)
            #expect(bogus.stdout == expected)
            #expect(bogus.stderr == "oidc: warning: OIDC_LOG='verbose' is not a log level; use debug, trace or off. Not logging.\n")
        }
    }
}
