import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login` and the commands of a terminal user's day, run as the built binary against
/// TestProvider over real loopback HTTP, with the test browser (an HTTP client that follows
/// redirects and signs in) as `$BROWSER`.
@Suite("oidc login and the terminal user's day", .timeLimit(.scaledMinutes(3)))
struct LoginCommandTests {
    static func loginPageProvider(_ body: (TestProvider) async throws -> Void) async throws {
        try await withTestProvider(TestProvider.Configuration(authorizeBehaviour: .loginPage), body)
    }

    static func loginArguments(_ provider: TestProvider, profile: String = "work") -> [String] {
        ["login", "--issuer", provider.issuer, "--client-id", "test-client", "--scope", "openid", "--scope", "profile",
         "--scope", "offline_access", "--profile", profile]
    }

    /// No token, code or secret of `tokens` in `text`.
    static func expectNoSecret(_ text: String, _ tokens: TokenSet?, _ comment: String) {
        guard let tokens else { return }
        for secret in [tokens.accessToken, tokens.refreshToken, tokens.idToken].compactMap({ $0?.revealedValue }) {
            #expect(!text.contains(secret), "a token appears in \(comment)")
        }
    }

    @Test("login through the loopback listener, then token in every form, request, refresh on 401, refresh, status, logout, login again from the profile")
    func wholeDay() async throws {
        try await Self.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(Self.loginArguments(provider) + ["--allow-host", "127.0.0.1"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            #expect(login.stderr.contains("logged in as test-user at \(provider.issuer) (profile 'work')"))
            #expect(login.stderr.contains("http://127.0.0.1:"))
            #expect(login.stderr.contains("Ctrl-C"))
            #expect(sandbox.log.contains("final: 200 /callback"), "\(sandbox.log)")
            let stored = try #require(try sandbox.storedLogin("work"))
            #expect(stored.subject == "test-user")
            #expect(stored.provider?.tokenEndpoint?.absoluteString == provider.tokenEndpoint)
            Self.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
            Self.expectNoSecret(sandbox.log, stored.tokens, "the browser's pages")
            for file in sandbox.files() where file.path.hasPrefix(sandbox.config) || file.path.hasPrefix(sandbox.state) {
                #expect(file.mode & 0o077 == 0, "\(file.path) is readable by others (\(String(file.mode, radix: 8)))")
            }
            #expect(FileManager.default.fileExists(atPath: sandbox.profileDirectory + "/work.json"))

            let token = try await sandbox.run(["token", "--profile", "work"])
            #expect(token.status == 0)
            #expect(token.stdout == stored.tokens.accessToken.revealedValue + "\n")
            #expect(token.stderr.isEmpty)
            #expect(try await TokenCommandTests.resourceStatus(provider, token: stored.tokens.accessToken.revealedValue) == 200)

            let idToken = try await sandbox.run(["token", "--profile", "work", "--output", "id-token"])
            #expect(idToken.stdout == stored.tokens.idToken!.revealedValue + "\n")

            let json = try await sandbox.run(["token", "--profile", "work", "--output", "json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["subject"] as? String == "test-user")
            #expect(object["access_token"] as? String == stored.tokens.accessToken.revealedValue)

            let v1 = try await sandbox.run(
                ["token", "--profile", "work", "--output", "exec-credential"],
                extra: ["KUBERNETES_EXEC_INFO": #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}"#]
            )
            #expect(v1.status == 0, "\(v1.stderr)")
            let credential = try #require(try JSONSerialization.jsonObject(with: Data(v1.stdout.utf8)) as? [String: Any])
            #expect(credential["apiVersion"] as? String == "client.authentication.k8s.io/v1")
            #expect(credential["kind"] as? String == "ExecCredential")
            // Written by hand, byte for byte what JSONSerialization writes (sorted, compact, `/` as is).
            let reserialized = try JSONSerialization.data(withJSONObject: credential, options: [.sortedKeys, .withoutEscapingSlashes])
            #expect(v1.stdout == String(decoding: reserialized, as: UTF8.self) + "\n")
            let status = try #require(credential["status"] as? [String: Any])
            #expect(status["token"] as? String == stored.tokens.idToken!.revealedValue)
            let timestamp = try #require(status["expirationTimestamp"] as? String)
            #expect(timestamp.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/) != nil, "\(timestamp)")
            // The ID token's own exp, to the second.
            let exp = try #require(try UnverifiedJWT(stored.tokens.idToken!.revealedValue).claims["exp"]?.numberValue)
            #expect(ISO8601DateFormatter().date(from: timestamp)?.timeIntervalSince1970 == exp.rounded(.down))
            let beta = try await sandbox.run(["token", "--profile", "work", "--output", "exec-credential", "--token-type", "access"])
            let betaObject = try #require(try JSONSerialization.jsonObject(with: Data(beta.stdout.utf8)) as? [String: Any])
            #expect(betaObject["apiVersion"] as? String == "client.authentication.k8s.io/v1beta1")
            #expect((betaObject["status"] as? [String: Any])?["token"] as? String == stored.tokens.accessToken.revealedValue)
            let alpha = try await sandbox.run(
                ["token", "--profile", "work", "--output", "exec-credential"],
                extra: ["KUBERNETES_EXEC_INFO": #"{"apiVersion":"client.authentication.k8s.io/v1alpha1"}"#]
            )
            #expect(alpha.status == 2)
            #expect(alpha.stdout.isEmpty)

            let request = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work"])
            #expect(request.status == 0, "\(request.stderr)")
            #expect(request.stderr.contains("HTTP 200"))
            #expect(request.stdout.contains("test-user"))

            await provider.expireAccessTokens()
            let afterExpiry = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work"])
            #expect(afterExpiry.status == 0, "\(afterExpiry.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            // The profile allows the token to 127.0.0.1 only: another loopback host gets nothing (exit 6).
            let offHost = try await sandbox.run(["request", "http://127.0.0.2:\(provider.port)/api/me", "--profile", "work"])
            #expect(offHost.status == 6, "\(offHost.stderr)")
            #expect(offHost.stdout.isEmpty)

            let refresh = try await sandbox.run(["refresh", "--profile", "work"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            #expect(refresh.stdout.isEmpty)
            #expect(await provider.grantCount("refresh_token") == 2)
            let refreshed = try #require(try sandbox.storedLogin("work"))
            #expect(refreshed.tokens.refreshToken != stored.tokens.refreshToken)

            let statusText = try await sandbox.run(["status", "--profile", "work"])
            #expect(statusText.status == 0)
            #expect(statusText.stdout.contains("logged in as test-user"))
            #expect(statusText.stdout.contains("refreshable: yes"))
            let statusJSON = try await sandbox.run(["status", "--profile", "work", "--output", "json"])
            let statusObject = try #require(try JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any])
            #expect(statusObject["issuer"] as? String == provider.issuer)
            #expect(statusObject["logged_in"] as? Bool == true)
            for output in [statusText.stdout, statusJSON.stdout, refresh.stderr, request.stderr] {
                Self.expectNoSecret(output, refreshed.tokens, "status or stderr")
                Self.expectNoSecret(output, stored.tokens, "status or stderr")
            }

            let logout = try await sandbox.run(["logout", "--profile", "work"])
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(logout.stderr.contains("revoked"))
            #expect(await provider.requestCount(.revocation) == 1)
            #expect(try sandbox.storedLogin("work") == nil)
            let refused = try await TokenCommandTests.resourceStatus(provider, token: refreshed.tokens.accessToken.revealedValue)
            #expect(refused == 401)
            #expect(try await sandbox.run(["status", "--profile", "work"]).status == 4)
            let afterLogout = try await sandbox.run(["token", "--profile", "work"])
            #expect(afterLogout.status == 4)
            #expect(afterLogout.stderr.contains("oidc login --profile work"))

            // The profile remembers everything: logging in again needs no other flag.
            let again = try await sandbox.run(["login", "--profile", "work"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try sandbox.storedLogin("work") != nil)
        }
    }

    @Test("a callback with a wrong state is answered with an error page and ignored; the right one completes the login")
    func wrongStateIsIgnored() async throws {
        try await Self.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(Self.loginArguments(provider), browser: ["--forge-callback-first"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(sandbox.log.contains("forged callback: 400"), "\(sandbox.log)")
            #expect(sandbox.log.contains("final: 200"))
            #expect(try sandbox.storedLogin("work") != nil)
        }
    }

    @Test("access_denied exits 4 with the provider's description; nothing is stored, and an earlier login survives it")
    func accessDenied() async throws {
        try await Self.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(Self.loginArguments(provider, profile: "kept"))
            #expect(first.status == 0, "\(first.stderr)")
            let kept = try #require(try sandbox.storedLogin("kept"))
            let again = try await sandbox.run(Self.loginArguments(provider, profile: "kept"), browser: ["--deny"])
            #expect(again.status == 4)
            #expect(try sandbox.storedLogin("kept") == kept)

            let login = try await sandbox.run(Self.loginArguments(provider), browser: ["--deny"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains("access_denied"))
            #expect(login.stderr.contains("The user cancelled the sign-in"))
            #expect(sandbox.log.contains("final: 400"), "\(sandbox.log)")
            #expect(try sandbox.storedLogin("work") == nil)
            #expect(!FileManager.default.fileExists(atPath: sandbox.profileDirectory + "/work.json"))
        }
    }

    @Test("--timeout exits 3, --no-browser prints the URL only, and the port is closed afterwards")
    func timeout() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(Self.loginArguments(provider) + ["--no-browser", "--timeout", "\(TestTime.scaled(1))"])
            #expect(login.status == 3, "\(login.stderr)")
            #expect(login.stderr.contains("http://127.0.0.1:"))
            #expect(sandbox.log.isEmpty)
            #expect(try sandbox.storedLogin("work") == nil)
            // The listener's port is free again: nothing was left listening.
            let port = try #require(login.stderr.firstMatch(of: /in your browser: http:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) })
            let again = try await sandbox.run(Self.loginArguments(provider) + ["--no-browser", "--timeout", "\(TestTime.scaled(1))", "--listen", "127.0.0.1:\(port)"])
            #expect(again.status == 3, "\(again.stderr)")
        }
    }

    @Test("Ctrl-C while waiting exits 130 and stores nothing")
    func interrupted() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let result = try await OIDCBinary.run(
                Self.loginArguments(provider) + ["--no-browser"], environment: sandbox.environment(), timeout: .scaled(.seconds(30)),
                started: { process in
                    // Once the login has asked for the provider's metadata, it listens for Ctrl-C.
                    awaitEvent { await provider.requestCount(.discovery) > 0 }
                    process.interrupt()
                }
            )
            #expect(result.status == 130, "\(result.stderr)")
            #expect(try sandbox.storedLogin("work") == nil)
        }
    }

    /// Ctrl-C in a login's first milliseconds was lost: dispatch's signal source was still being
    /// registered, with the default action already off, and the login went on waiting for its whole
    /// timeout (found trying `oidc login` by hand as the ordinary user). The signals are spread over
    /// the first 30 ms, where the handlers are being installed; each login must end at once.
    @Test("Ctrl-C at any moment of a login's start ends it at once (130, or by SIGINT before any handler), never lost", arguments: [false, true])
    func interruptedEarly(device: Bool) async throws {
        try await DeviceLoginCommandTests.deviceProvider { provider in
            let sandbox = LoginSandbox()
            for microseconds: UInt32 in stride(from: 0, through: 30_000, by: 2_500) {
                let result = try await OIDCBinary.run(
                    ["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "early", "--timeout", "20"]
                        + (device ? ["--flow", "device"] : ["--flow", "browser", "--no-browser"]),
                    environment: sandbox.environment(), timeout: .scaled(.seconds(40)),
                    started: { process in
                        usleep(microseconds)
                        process.interrupt()
                    })
                // 130 from the handler, or, before it is installed, the default action (ended by SIGINT, silent).
                let ended = result.status == 130 || (result.status == SIGINT && result.stderr.isEmpty)
                #expect(ended, "SIGINT \(microseconds) µs after the start: exit \(result.status): \(result.stderr)")
            }
            #expect(try sandbox.storedLogin("early") == nil)
        }
    }

    @Test("a fixed port in use is a usage error that names it; an unreachable provider exits 5; an unknown profile is explained")
    func setupErrors() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            // The provider's own port is taken.
            let busy = try await sandbox.run(Self.loginArguments(provider) + ["--listen", "127.0.0.1:\(provider.port)"])
            #expect(busy.status == 2, "\(busy.stderr)")
            #expect(busy.stderr.contains("127.0.0.1:\(provider.port)"))
            #expect(busy.stderr.contains("in use"))

            let down = try await sandbox.run(["login", "--issuer", "http://127.0.0.1:1", "--client-id", "c", "--profile", "down"])
            #expect(down.status == 5, "\(down.stderr)")

            let unknownLogin = try await sandbox.run(["login", "--profile", "nope"])
            #expect(unknownLogin.status == 2)
            #expect(unknownLogin.stderr.contains("profile 'nope' is unknown"))
            let unknownToken = try await sandbox.run(["token", "--profile", "nope"])
            #expect(unknownToken.status == 4)
            #expect(unknownToken.stderr.contains("no login for profile 'nope'"))

            let mfa = try await sandbox.run(Self.loginArguments(provider) + ["--mfa", "otp"])
            #expect(mfa.status == 2)
            #expect(mfa.stderr.contains("--mfa is for --provider schibsted only"))
            let swan = try await sandbox.run(["login", "--provider", "swan", "--client-id", "c", "--profile", "swan"])
            #expect(swan.status == 2)
            #expect(swan.stderr.contains("--client-secret-file"))
            let schibsted = try await sandbox.run(["login", "--provider", "schibsted", "--client-id", "c", "--profile", "s"])
            #expect(schibsted.status == 2)
            #expect(schibsted.stderr.contains("--environment"))

            let localhost = try await sandbox.run(Self.loginArguments(provider) + ["--listen", "localhost:8000"])
            #expect(localhost.status == 2)
            #expect(localhost.stderr.contains("--listen"))
        }
    }

    @Test("a corrupt store: oidc token exits 7 naming the file, which is kept aside, never overwritten in place")
    func corruptStore() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            #expect(try await sandbox.run(Self.loginArguments(provider)).status == 0)
            let file = try #require(try FileManager.default.contentsOfDirectory(atPath: sandbox.store).first { $0.hasSuffix("work.json") })
            let path = sandbox.store + "/" + file
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
            let token = try await sandbox.run(["token", "--profile", "work"])
            #expect(token.status == 7, "\(token.stderr)")
            #expect(token.stderr.contains(path))
            #expect(token.stdout.isEmpty)
            let kept = try FileManager.default.contentsOfDirectory(atPath: sandbox.store).filter { $0.contains("corrupt") }
            #expect(kept.count == 1)
            #expect(try String(contentsOfFile: sandbox.store + "/" + kept[0], encoding: .utf8) == "{not json")

            // A profile file others can write is refused, not followed; --all still shows and logs out the rest.
            #expect(try await sandbox.run(Self.loginArguments(provider, profile: "other")).status == 0)
            let profile = sandbox.profileDirectory + "/work.json"
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: profile)
            let loose = try await sandbox.run(["token", "--profile", "work"])
            #expect(loose.status == 7, "\(loose.stderr)")
            #expect(loose.stderr.contains(profile))
            // A profile that is a symbolic link (here to a proper profile of this user) is refused too.
            let linked = sandbox.profileDirectory + "/linked.json"
            try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: sandbox.profileDirectory + "/other.json")
            let viaLink = try await sandbox.run(["token", "--profile", "linked"])
            #expect(viaLink.status == 7, "\(viaLink.stderr)")
            #expect(viaLink.stderr.contains(linked))
            try FileManager.default.removeItem(atPath: linked)
            let statusAll = try await sandbox.run(["status", "--all"])
            #expect(statusAll.status == 0, "\(statusAll.stderr)")
            #expect(statusAll.stdout.contains("profile other: logged in"))
            #expect(statusAll.stdout.contains("profile work: unreadable"))
            let logoutAll = try await sandbox.run(["logout", "--all"])
            #expect(logoutAll.status == 0, "\(logoutAll.stderr)")
            #expect(try sandbox.storedLogin("other") == nil)
        }
    }

    @Test("8 oidc token processes at once on the expired token of a real login: one refresh, 8 identical tokens, still logged in")
    func eightProcessesAfterLogin() async throws {
        try await withTestProvider(TestProvider.Configuration(accessTokenLifetime: 2)) { provider in
            let sandbox = LoginSandbox()
            #expect(try await sandbox.run(Self.loginArguments(provider)).status == 0)
            let old = try #require(try sandbox.storedLogin("work"))
            // The commands' clock 3 s ahead: the 2-second token has expired for them, with no wait.
            let later = ["OIDC_TEST_CLOCK_OFFSET": "3"]
            let barrier = try ChildProcess(OIDCBinary.sibling("oidc-store-writer"), [sandbox.store, "oidc", "work", "block", "1500"])
            let locked = await barrier.output()
            #expect(locked.contains("locked"))
            let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
                for _ in 0..<8 { group.addTask { try await sandbox.run(["token", "--profile", "work"], extra: later) } }
                return try await group.reduce(into: [CommandResult]()) { $0.append($1) }
            }
            _ = await barrier.exitStatus()
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
            let tokens = Set(results.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) })
            #expect(tokens.count == 1)
            #expect(!tokens.contains(old.tokens.accessToken.revealedValue))
            #expect(await provider.grantCount("refresh_token") == 1)
            let now = try #require(try sandbox.storedLogin("work"))
            #expect(now.tokens.accessToken.revealedValue == tokens.first)
            #expect(try await sandbox.run(["status", "--profile", "work"]).status == 0)
        }
    }

    @Test("oidc request: 5xx exits 5 and keeps the login; a rejected refresh after a 401 exits 4 and logs the profile out; -d @file is sent")
    func requestFailures() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            #expect(try await sandbox.run(Self.loginArguments(provider)).status == 0)
            let body = sandbox.root.appendingPathComponent("body.json").path
            #expect(FileManager.default.createFile(atPath: body, contents: Data(#"{"a":1}"#.utf8)))
            let posted = try await sandbox.run(
                ["request", provider.protectedResourceURL, "--profile", "work", "-H", "Content-Type: application/json", "--data", "@" + body]
            )
            #expect(posted.status == 0, "\(posted.stderr)")

            await provider.failNextRequests(1, to: .protectedResource, with: .serviceUnavailable)
            let unavailable = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work"])
            #expect(unavailable.status == 5, "\(unavailable.stderr)")
            #expect(unavailable.stderr.contains("HTTP 503"))
            #expect(try sandbox.storedLogin("work") != nil)

            let authorization = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work", "-H", "Authorization: Basic eA=="])
            #expect(authorization.status == 2)

            // No --allow-host at login: the token goes to the issuer's host only, whatever URL is typed.
            let elsewhere = "http://127.0.0.2:\(provider.port)/api/me"
            let refused = try await sandbox.run(["request", elsewhere, "--profile", "work"])
            #expect(refused.status == 6, "\(refused.stderr)")
            #expect(refused.stderr.contains("--allow-host"))
            let broad = try await sandbox.run(["request", elsewhere, "--profile", "work", "--allow-host", ".com"])
            #expect(broad.status == 2)
            // A port is not part of an allowed host (it would never match): a usage error naming the host alone.
            let withPort = try await sandbox.run(["request", elsewhere, "--profile", "work", "--allow-host", "127.0.0.2:\(provider.port)"])
            #expect(withPort.status == 2 && withPort.stderr.contains("names a port") && withPort.stderr.contains("(127.0.0.2)"), "\(withPort.stderr)")
            // The issuer's host, but another port: another program on loopback.
            let otherPort = try await sandbox.run(["request", "http://127.0.0.1:1/api/me", "--profile", "work"])
            #expect(otherPort.status == 6, "\(otherPort.stderr)")
            // It names where the token may go, each place once, with its port.
            #expect(otherPort.stderr.contains("goes to 127.0.0.1:\(provider.port) only"), "\(otherPort.stderr)")
            let allowed = try await sandbox.run(["request", elsewhere.replacingOccurrences(of: "127.0.0.2", with: "localhost"), "--profile", "work", "--allow-host", "localhost"])
            #expect(allowed.status == 0, "\(allowed.stderr)")

            await provider.expireAccessTokens()
            await provider.failNextTokenRequests(1, with: .invalidGrant)
            let rejected = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work"])
            #expect(rejected.status == 4, "\(rejected.stderr)")
            #expect(rejected.stderr.contains("invalid_grant"))
            #expect(rejected.stdout.isEmpty)
            #expect(try sandbox.storedLogin("work") == nil)
        }
    }

    @Test("a secret given with --client-secret is not remembered: a refresh without one is a usage error that keeps the login; logout without it still deletes; a profile moved to another provider forgets the secret file")
    func confidentialClient() async throws {
        var configuration = TestProvider.Configuration(accessTokenLifetime: 2)
        configuration.clients.append(.confidential(id: "conf", secret: "s3cret-value"))
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(
                ["login", "--issuer", provider.issuer, "--client-id", "conf", "--client-secret", "s3cret-value", "--scope", "profile", "--profile", "c"]
            )
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("--client-secret-file"))
            #expect(!login.stderr.contains("s3cret-value"))
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/c.json", encoding: .utf8)
            #expect(!profile.contains("s3cret-value"))
            #expect(try sandbox.storedLogin("c")?.tokens.scopes.contains("openid") == true)  // added to --scope profile

            // The commands' clock 3 s ahead: the 2-second token has expired for them, with no wait.
            let later = ["OIDC_TEST_CLOCK_OFFSET": "3"]
            let noSecret = try await sandbox.run(["token", "--profile", "c"], extra: later)
            #expect(noSecret.status == 2, "\(noSecret.stderr)")
            #expect(noSecret.stderr.contains("--client-secret-file"))
            #expect(try sandbox.storedLogin("c") != nil)
            #expect(await provider.grantCount("refresh_token") == 0)

            let secretFile = sandbox.root.appendingPathComponent("secret").path
            #expect(FileManager.default.createFile(atPath: secretFile, contents: Data("s3cret-value\n".utf8), attributes: [.posixPermissions: 0o600]))
            let withSecret = try await sandbox.run(["token", "--profile", "c", "--client-secret-file", secretFile], extra: later)
            #expect(withSecret.status == 0, "\(withSecret.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)

            let logout = try await sandbox.run(["logout", "--profile", "c", "--client-secret-file", "/nonexistent/secret"])
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(logout.stderr.contains("not revoked"))
            #expect(try sandbox.storedLogin("c") == nil)

            // Remember the secret file, then point the profile at another provider: the file is forgotten.
            #expect(try await sandbox.run(
                ["login", "--issuer", provider.issuer, "--client-id", "conf", "--client-secret-file", secretFile, "--allow-host", "127.0.0.1", "--profile", "c"]
            ).status == 0)
            #expect(try String(contentsOfFile: sandbox.profileDirectory + "/c.json", encoding: .utf8).contains(secretFile))
            let sharedSecret = try await sandbox.run(["logout", "--all", "--client-secret-file", secretFile])
            #expect(sharedSecret.status == 2)  // one secret for every profile's provider: refused
            // Another client at the same provider: the first client's secret file is forgotten too.
            #expect(try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "c"]).status == 0)
            #expect(!(try String(contentsOfFile: sandbox.profileDirectory + "/c.json", encoding: .utf8).contains(secretFile)))
            #expect(try await sandbox.run(
                ["login", "--issuer", provider.issuer, "--client-id", "conf", "--client-secret-file", secretFile, "--allow-host", "127.0.0.1", "--profile", "c"]
            ).status == 0)
            try await withTestProvider { other in
                let moved = try await sandbox.run(["login", "--issuer", other.issuer, "--client-id", "test-client", "--profile", "c"])
                #expect(moved.status == 0, "\(moved.stderr)")
                let saved = try String(contentsOfFile: sandbox.profileDirectory + "/c.json", encoding: .utf8)
                #expect(!saved.contains(secretFile))
                #expect(!saved.contains("allow_hosts"))
                #expect(saved.contains(other.issuer))
            }
        }
    }

    @Test("oidc demo --headless: login, claims, API, refresh on 401 and logout against the embedded provider")
    func demo() async throws {
        let sandbox = LoginSandbox()
        let result = try await sandbox.run(["demo", "--headless"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("signs in on the provider's page itself"))
        #expect(result.stderr.contains("== 6. logged out"))
        #expect(result.stdout.contains("\"sub\" : \"test-user\""))
    }
}
