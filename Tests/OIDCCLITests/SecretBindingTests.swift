import Foundation
import OIDC
import OIDCTesting
import Testing

/// A profile's client secret goes only to the issuer and client it was configured for (review 3,
/// M3), and only from a file no other user can read, write or replace (L4).
@Suite("Client secrets: only to their own provider, only from a private file", .timeLimit(.minutes(3)))
struct SecretBindingTests {
    static func secretFile(_ sandbox: LoginSandbox, _ name: String, _ secret: String) -> String {
        let path = sandbox.root.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        return path
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
            try await Task.sleep(for: .seconds(1.2))

            for mode in [0o644, 0o640, 0o620, 0o602] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: secret)
                let refused = try await sandbox.run(["token", "--profile", "c"])
                #expect(refused.status == 2, "mode \(String(mode, radix: 8)): \(refused.stderr)")
                #expect(refused.stderr.contains("--client-secret-file") && refused.stderr.contains("chmod 600"), "\(refused.stderr)")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret)
            let link = sandbox.root.appendingPathComponent("secret-link").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: secret)
            let linked = try await sandbox.run(["token", "--profile", "c", "--client-secret-file", link])
            #expect(linked.status == 2, "\(linked.stderr)")
            #expect(linked.stderr.contains("symbolic link"), "\(linked.stderr)")
            if getuid() == 0 {
                // Planted by another user (what a shared directory allows): refused whatever its mode.
                let planted = Self.secretFile(sandbox, "planted", "attacker-chosen")
                #expect(chown(planted, 65534, 65534) == 0)
                let foreign = try await sandbox.run(["token", "--profile", "c", "--client-secret-file", planted])
                #expect(foreign.status == 2, "\(foreign.stderr)")
                #expect(foreign.stderr.contains("belongs to user id 65534"), "\(foreign.stderr)")
            }
            let badLogin = try await sandbox.run(["login", "--profile", "c", "--client-secret-file", link])
            #expect(badLogin.status == 2, "\(badLogin.stderr)")
            #expect(await provider.grantCount("refresh_token") == 0)
            #expect(try sandbox.storedLogin("c") != nil)

            let fixed = try await sandbox.run(["token", "--profile", "c"])
            #expect(fixed.status == 0, "\(fixed.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }
}
