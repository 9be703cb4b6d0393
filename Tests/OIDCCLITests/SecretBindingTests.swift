import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A profile's client secret goes only to the issuer and client it was configured for (review 3,
/// M3), and only from a file no other user can read, write or replace (L4).
@Suite("Client secrets: only to their own provider, only from a private file", .timeLimit(.scaledMinutes(3)))
struct SecretBindingTests {
    static func secretFile(_ sandbox: LoginSandbox, _ name: String, _ secret: String) -> String {
        let path = sandbox.root.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    static func statusEntries(_ result: CommandResult) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], "\(result.stdout) \(result.stderr)")
    }

    /// R-M3: profile `work` logged in to X in the default store, then to Y in another store. The X
    /// login stayed in the default store, out of sight, and `oidc logout --all` (or `oidc token
    /// --store` of the default store) sent Y's secret to X, which answered `invalid_client`.
    @Test("a profile moved to another provider and store: the old login's provider never gets the new secret; status --all shows the old login as superseded")
    func secretStaysWithItsClient() async throws {
        var x = TestProvider.Configuration(accessTokenLifetime: 2)
        x.clients.append(.confidential(id: "app-x", secret: "secret-of-X"))
        var y = TestProvider.Configuration()
        y.clients.append(.confidential(id: "app-y", secret: "secret-of-Y"))
        try await withTestProvider(x) { providerX in
            try await withTestProvider(y) { providerY in
                let sandbox = LoginSandbox()
                let secretX = Self.secretFile(sandbox, "secret-x", "secret-of-X")
                let secretY = Self.secretFile(sandbox, "secret-y", "secret-of-Y")
                let storeY = sandbox.root.appendingPathComponent("store-y").path
                let loginX = try await sandbox.run(
                    ["login", "--issuer", providerX.issuer, "--client-id", "app-x", "--client-secret-file", secretX, "--profile", "work"]
                )
                #expect(loginX.status == 0, "\(loginX.stderr)")
                let loginY = try await sandbox.run(
                    ["login", "--issuer", providerY.issuer, "--client-id", "app-y", "--client-secret-file", secretY, "--store", storeY, "--profile", "work"]
                )
                #expect(loginY.status == 0, "\(loginY.stderr)")

                // Both logins are shown; the one the profile no longer points to says so.
                let entries = try Self.statusEntries(try await sandbox.run(["status", "--all", "--output", "json"]))
                let work = entries.filter { $0["profile"] as? String == "work" }
                #expect(work.count == 2, "\(entries)")
                let old = try #require(work.first { $0["issuer"] as? String == providerX.issuer }, "\(entries)")
                #expect(old["superseded"] as? Bool == true)
                #expect(old["refreshable"] as? Bool == false)
                let pointsTo = try #require(old["profile_points_to"] as? [String: String])
                #expect(pointsTo == ["issuer": providerY.issuer, "client_id": "app-y", "store": storeY])
                let current = try #require(work.first { $0["issuer"] as? String == providerY.issuer })
                #expect(current["superseded"] == nil)
                let text = try await sandbox.run(["status", "--all"])
                #expect(text.stdout.contains("superseded:  profile 'work' now points to issuer \(providerY.issuer), client id app-y, store \(storeY)"), "\(text.stdout)")

                // The old login's refresh: refused before anything is sent, login kept.
                // The commands' clock 3 s ahead: the 2-second token has expired for them, with no wait.
                let later = ["OIDC_TEST_CLOCK_OFFSET": "3"]
                let refused = try await sandbox.run(["token", "--profile", "work", "--store", sandbox.store], extra: later)
                #expect(refused.status == 2, "\(refused.stderr)")
                #expect(refused.stderr.contains("a client secret goes only to the provider and client it was configured for"), "\(refused.stderr)")
                #expect(!refused.stderr.contains("secret-of-"))
                #expect(await providerX.grantCount("refresh_token") == 0)
                #expect(try sandbox.storedLogin("work") != nil)
                // Its own secret, given on the command, refreshes it.
                let own = try await sandbox.run(["token", "--profile", "work", "--store", sandbox.store, "--client-secret-file", secretX], extra: later)
                #expect(own.status == 0, "\(own.stderr)")
                #expect(await providerX.grantCount("refresh_token") == 1)

                // logout --all of the default store: X's login goes, not revoked with Y's secret (X gets no request).
                let logout = try await sandbox.run(["logout", "--all"])
                #expect(logout.status == 0, "\(logout.stderr)")
                #expect(logout.stderr.contains("not revoked (the login of profile 'work'"), "\(logout.stderr)")
                #expect(await providerX.requestCount(.revocation) == 0)
                #expect(try sandbox.storedLogin("work") == nil)

                // The profile's own login is untouched and uses its secret.
                let mine = try await sandbox.run(["refresh", "--profile", "work"])
                #expect(mine.status == 0, "\(mine.stderr)")
                #expect(await providerY.grantCount("refresh_token") == 1)
                let ownLogout = try await sandbox.run(["logout", "--profile", "work"])
                #expect(ownLogout.stderr.contains("the refresh token was revoked at the provider"), "\(ownLogout.stderr)")
                #expect(await providerY.requestCount(.revocation) == 1)
            }
        }
    }

    /// R-L4: a secret file in a shared directory, removed and planted again by another user, had
    /// its bytes sent as the client secret; the provider's `invalid_client` then logged the profile out.
    @Test("a client secret file others can read or write, of another user, or a link is refused (exit 2, chmod 600): nothing is sent, the login is kept")
    func secretFileChecks() async throws {
        var configuration = TestProvider.Configuration(accessTokenLifetime: 2)
        configuration.clients.append(.confidential(id: "conf", secret: "s3cret-value"))
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secret = Self.secretFile(sandbox, "secret", "s3cret-value")
            let login = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "conf", "--client-secret-file", secret, "--profile", "c"])
            #expect(login.status == 0, "\(login.stderr)")
            // The commands' clock 3 s ahead: the 2-second token has expired for them, with no wait.
            let later = ["OIDC_TEST_CLOCK_OFFSET": "3"]

            for mode in [0o644, 0o640, 0o620, 0o602] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: secret)
                let refused = try await sandbox.run(["token", "--profile", "c"], extra: later)
                #expect(refused.status == 2, "mode \(String(mode, radix: 8)): \(refused.stderr)")
                #expect(refused.stderr.contains("--client-secret-file") && refused.stderr.contains("chmod 600"), "\(refused.stderr)")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret)
            let link = sandbox.root.appendingPathComponent("secret-link").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: secret)
            let linked = try await sandbox.run(["token", "--profile", "c", "--client-secret-file", link], extra: later)
            #expect(linked.status == 2, "\(linked.stderr)")
            #expect(linked.stderr.contains("symbolic link"), "\(linked.stderr)")
            if OtherUser.available, let other = OtherUser.ids {
                // Planted by another user (what a shared directory allows), made by that user, readable
                // by us: refused for being theirs.
                let theirs = try await OtherUser.makeDirectory(files: ["planted": "attacker-chosen"])
                let foreign = try await sandbox.run(["token", "--profile", "c", "--client-secret-file", theirs + "/planted"], extra: later)
                try await OtherUser.remove(theirs)
                #expect(foreign.status == 2, "\(foreign.stderr)")
                #expect(foreign.stderr.contains("belongs to user id \(other.uid)"), "\(foreign.stderr)")
            }
            let badLogin = try await sandbox.run(["login", "--profile", "c", "--client-secret-file", link])
            #expect(badLogin.status == 2, "\(badLogin.stderr)")
            #expect(await provider.grantCount("refresh_token") == 0)
            #expect(try sandbox.storedLogin("c") != nil)

            let fixed = try await sandbox.run(["token", "--profile", "c"], extra: later)
            #expect(fixed.status == 0, "\(fixed.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }
}
