import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// User trial 5, F4, F6, F8, F11, F12, F24 and review 5's L1 (status): how a login begins, is
/// replaced and ends, each said in the command's own words. The built binary against TestProvider.
@Suite("The login lifecycle: begun, replaced, ended, each said", .timeLimit(.scaledMinutes(3)))
struct LoginLifecycleTests {
    /// `oidc inject` of a login at `provider` whose refresh token the provider does not know.
    static func injectUnknownRefreshToken(_ provider: TestProvider, store: String, environment: [String: String] = [:]) async throws {
        let tokens = try await provider.issueTokens()
        let response = #"{"access_token":"\#(tokens.accessToken.revealedValue)","token_type":"Bearer","refresh_token":"never-issued-refresh-token","scope":"openid offline_access"}"#
        let result = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", "work", "--issuer", provider.issuer, "--client-id", "test-client",
             "--token-endpoint", provider.tokenEndpoint, "--token-response", "-", "--expires-in=-10"],
            stdin: response, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The provider's answer to `refreshToken` at its token endpoint: the HTTP status.
    static func refreshStatus(_ provider: TestProvider, _ refreshToken: Secret) async throws -> Int {
        let body = "grant_type=refresh_token&client_id=test-client&refresh_token=" + refreshToken.revealedValue
        return try await withNIOHTTPTransport { transport in
            try await transport.send(
                HTTPRequest(
                    method: "POST", url: URL(string: provider.tokenEndpoint)!, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Array(body.utf8))
            ).status
        }
    }

    @Test("F6: a refresh refused with invalid_grant says the login is over and was removed, and how to log in again")
    func refusedRefreshSaysTheLoginEnded() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            // Profiles of its own: what "log in again" names depends on the profile (none here).
            let isolated = LoginSandbox().environment()
            try await Self.injectUnknownRefreshToken(provider, store: store, environment: isolated)
            let refused = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"], environment: isolated)
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("invalid_grant"))
            // An injected login has no profile to log in again from: the flags it needs are named.
            #expect(
                refused.stderr.contains(
                    "oidc: the login of profile 'work' is over and was removed; log in again with: oidc login --profile work --store \(store) --issuer \(provider.issuer) --client-id test-client"),
                "\(refused.stderr)")
            let status = try await OIDCBinary.run(["status", "--store", store, "--profile", "work"], environment: isolated)
            #expect(status.status == 4)
            #expect(status.stdout.contains("not logged in"))
        }
    }

    @Test("F11: a login over a live one revokes the refresh token it replaces, and says so; the new one works")
    func reloginRevokesTheReplacedGrant() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(LoginCommandTests.loginArguments(provider))
            #expect(first.status == 0, "\(first.stderr)")
            #expect(!first.stderr.contains("replaced"))
            let old = try #require(try sandbox.storedLogin("work")?.tokens.refreshToken)

            let second = try await sandbox.run(["login", "--profile", "work"])
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stderr.contains("replaced the earlier login of profile 'work': the refresh token was revoked at the provider"), "\(second.stderr)")
            let new = try #require(try sandbox.storedLogin("work")?.tokens.refreshToken)
            #expect(new != old)
            #expect(try await Self.refreshStatus(provider, old) == 400, "the replaced refresh token still works")
            let token = try await sandbox.run(["token", "--profile", "work", "--force-refresh"])
            #expect(token.status == 0, "\(token.stderr)")
        }
    }

    @Test("F11: two logins of one profile at once leave one grant: the one stored; the other's refresh token is revoked")
    func concurrentLoginsLeaveOneGrant() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            async let one = sandbox.run(LoginCommandTests.loginArguments(provider))
            async let two = sandbox.run(LoginCommandTests.loginArguments(provider))
            let results = try await [one, two]
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
            #expect(results.filter { $0.stderr.contains("replaced the earlier login") }.count == 1, "\(results.map(\.stderr))")
            #expect(await provider.grantCount("authorization_code") == 2)
            let kept = try #require(try sandbox.storedLogin("work")?.tokens.refreshToken)
            let revoked = await provider.requestParameters(.revocation).compactMap { $0["token"] }
            #expect(revoked.count == 1)
            #expect(!revoked.contains(kept.revealedValue), "the stored login's grant was revoked")
            if let loser = revoked.first { #expect(try await Self.refreshStatus(provider, Secret(loser)) == 400) }
            #expect(try await Self.refreshStatus(provider, kept) == 200)
        }
    }

    /// A home nothing can be written in, for the right reason: a read-only file system when this
    /// process may mount one; mode 0500 for an ordinary user; for root that may not mount (root is
    /// not stopped by permissions), an immutable directory (`chattr +i`), else a path under a
    /// regular file, where no directory can be made.
    final class ReadOnlyDirectory {
        let base: String
        let path: String
        /// What the store's message says of it.
        let reason: String
        /// Whether the message can name the way out (a path under a file fails on the first read,
        /// before oidc login asks whether it can write).
        let checkedForWriting: Bool
        private let mounted: Bool
        private var immutable = false

        static func chattr(_ flag: String, _ path: String) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["chattr", flag, path]
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }

        init() {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-ro-\(UUID().uuidString)").path
            mkdir(base, 0o700)
            mounted = mount("tmpfs", base, "tmpfs", UInt(MS_RDONLY), "size=64k,mode=0700") == 0
            if mounted {
                path = base
                reason = "read-only file system"
            } else if geteuid() != 0 {
                chmod(base, 0o500)
                path = base
                reason = "Permission denied"
            } else if Self.chattr("+i", base) {
                immutable = true
                path = base
                reason = "Permission denied"
            } else {
                let file = base + "/file"
                FileManager.default.createFile(atPath: file, contents: Data())
                path = file + "/home"
                reason = "not a directory"
            }
            checkedForWriting = reason != "not a directory"
        }

        deinit {
            if mounted { umount2(base, Int32(MNT_DETACH)) }
            if immutable { _ = Self.chattr("-i", base) }
            chmod(base, 0o700)
            try? FileManager.default.removeItem(atPath: base)
        }
    }

    @Test("F4: an unwritable store or profiles directory is found before the browser opens: exit 7, naming --store, OIDC_STORE, XDG_STATE_HOME / XDG_CONFIG_HOME")
    func unwritableStoreBeforeTheBrowser() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let readOnly = ReadOnlyDirectory()
            let home = ["HOME": readOnly.path]
            let store = try await sandbox.run(LoginCommandTests.loginArguments(provider), extra: home.merging(["XDG_STATE_HOME": ""]) { $1 })
            #expect(store.status == 7, "\(store.stderr)")
            #expect(store.stderr.contains(readOnly.reason), "\(store.stderr)")
            for named in ["--store DIR", "OIDC_STORE", "XDG_STATE_HOME", "no browser opened"] { #expect(store.stderr.contains(named), "\(named): \(store.stderr)") }
            #expect(!store.stderr.contains("sign in at"))

            let profiles = try await sandbox.run(LoginCommandTests.loginArguments(provider), extra: home.merging(["XDG_CONFIG_HOME": ""]) { $1 })
            #expect(profiles.status == 7, "\(profiles.stderr)")
            #expect(profiles.stderr.contains(readOnly.reason), "\(profiles.stderr)")
            #expect(!profiles.stderr.contains("sign in at"))
            if readOnly.checkedForWriting {
                #expect(profiles.stderr.contains("profiles directory"), "\(profiles.stderr)")
                for named in ["XDG_CONFIG_HOME", "no browser opened"] { #expect(profiles.stderr.contains(named), "\(named): \(profiles.stderr)") }
            }
            #expect(await provider.requestCount(.authorize) == 0)
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("F12: oidc logout of a profile that is not logged in exits 0 and says so")
    func logoutTwice() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            _ = try await TokenCommandTests.inject(provider, store: store)
            let first = try await OIDCBinary.run(["logout", "--store", store, "--profile", "work"])
            #expect(first.status == 0, "\(first.stderr)")
            let again = try await OIDCBinary.run(["logout", "--store", store, "--profile", "work"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("profile 'work' was not logged in"), "\(again.stderr)")
        }
    }

    @Test("F8: oidc status exits 4 for an expired login that cannot refresh, and names the flags a new login needs")
    func statusOfAnExpiredUnrefreshableLogin() async throws {
        let store = TokenCommandTests.temporaryStore()
        let injected = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", "inj2", "--issuer", "https://login.example.com", "--client-id", "ci-app",
             "--access-token", "-", "--expires-in", "-10"],
            stdin: "AT-old")
        #expect(injected.status == 0, "\(injected.stderr)")
        let status = try await OIDCBinary.run(["status", "--store", store, "--profile", "inj2"])
        #expect(status.status == 4, "\(status.stdout)")
        let again = "oidc login --profile inj2 --store \(store) --issuer https://login.example.com --client-id ci-app"
        #expect(status.stdout.contains("expired and not refreshable"), "\(status.stdout)")
        #expect(status.stdout.contains(again), "\(status.stdout)")
        #expect(status.stderr.contains("has expired and cannot be refreshed; log in again with: \(again)"), "\(status.stderr)")
        let json = try await OIDCBinary.run(["status", "--store", store, "--profile", "inj2", "--output", "json"])
        #expect(json.status == 4)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["can_give_token"] as? Bool == false)
        #expect(object["logged_in"] as? Bool == true)
        let token = try await OIDCBinary.run(["token", "--store", store, "--profile", "inj2"])
        #expect(token.status == 4)
        #expect(token.stderr.contains(again), "\(token.stderr)")

        // A fresh login that cannot refresh still gives a token: exit 0.
        let fresh = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", "fresh", "--issuer", "https://login.example.com", "--client-id", "ci-app",
             "--access-token", "-", "--expires-in", "3600"],
            stdin: "AT-new")
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(try await OIDCBinary.run(["status", "--store", store, "--profile", "fresh"]).status == 0)
    }

    @Test("F24: oidc status --all with nothing stored says where it looked and how to log in (exit 4)")
    func statusOfNothing() async throws {
        let sandbox = LoginSandbox()
        let status = try await sandbox.run(["status", "--all"])
        #expect(status.status == 4)
        #expect(status.stdout.contains("no profiles and no logins in \(sandbox.store); log in with: oidc login"), "\(status.stdout)")
    }

    @Test("review 5, L1: oidc status shows the issuer and client id of a login with terminal controls as ?")
    func statusSanitizesIssuerAndClient() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: store))
            let tokens = try await provider.issueTokens()
            try await keychain.inject(
                tokens, issuer: provider.issuer + "/\u{1B}]0;owned\u{07}", clientID: "client\u{1B}[31m", subject: "test-user",
                provider: provider.providerConfiguration, key: TokenStoreKey(service: "oidc", account: "work"))
            let status = try await OIDCBinary.run(["status", "--store", store, "--profile", "work"])
            #expect(!status.stdout.contains("\u{1B}"), "\(status.stdout.debugDescription)")
            #expect(!status.stdout.contains("\u{07}"))
            #expect(status.stdout.contains("client?[31m"), "\(status.stdout.debugDescription)")
        }
    }
}
