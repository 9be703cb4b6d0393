import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The profiles directory is held to the token store's rule (review 3, L5): a profile decides which
/// secret file is read, which browser command runs and which hosts get the token, and anyone who
/// can write in its directory can rename or swap the files there.
@Suite("The profiles directory: refused when others may enter it, like the token store's", .timeLimit(.scaledMinutes(3)))
struct ProfilePrivacyTests {
    static func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func expectRefused(_ result: CommandResult, _ directory: String, _ what: String) {
        #expect(result.status == 7, "\(what): exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("The profiles directory \(directory) is open to other users"), "\(what): \(result.stderr)")
        #expect(result.stderr.contains("chmod 700"), "\(what): \(result.stderr)")
        #expect(result.stdout.isEmpty, "\(what): \(result.stdout)")
    }

    /// R-L5: `chmod 777 …/oidc/profiles`, and the login succeeded; the same done to the token store exits 7.
    @Test("a profiles directory others can write or enter, or of another user: token, status, status --all, login and logout exit 7 before anything is sent")
    func refusedOnRead() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider))
            #expect(login.status == 0, "\(login.stderr)")
            let directory = sandbox.profileDirectory
            for mode in [0o777, 0o733, 0o711, 0o750] {
                try Self.chmod(directory, mode)
                Self.expectRefused(try await sandbox.run(["token", "--profile", "work"]), directory, "token, mode \(String(mode, radix: 8))")
                Self.expectRefused(
                    try await sandbox.run(["token", "--profile", "work"], extra: ["OIDC_FAST_PATH": "0"]), directory, "token through the parser"
                )
                Self.expectRefused(try await sandbox.run(["status", "--profile", "work"]), directory, "status")
                Self.expectRefused(try await sandbox.run(["status", "--all"]), directory, "status --all")
                Self.expectRefused(try await sandbox.run(["login", "--profile", "work"]), directory, "login")
                Self.expectRefused(try await sandbox.run(["logout", "--profile", "work"]), directory, "logout")
            }
            try Self.chmod(directory, 0o700)
            if OtherUser.available, let other = OtherUser.ids {
                // A profiles directory of another user (made by that user), private or not: theirs to
                // swap the files in.
                let theirs = try await OtherUser.makeDirectory(directories: ["oidc/profiles"])
                let foreign = try await sandbox.run(["token", "--profile", "work"], extra: ["XDG_CONFIG_HOME": theirs])
                try await OtherUser.remove(theirs)
                #expect(foreign.status == 7, "\(foreign.stderr)")
                #expect(foreign.stderr.contains("The profiles directory \(theirs)/oidc/profiles belongs to user id \(other.uid)"), "\(foreign.stderr)")
                // And a token store directory of theirs, which this user cannot even open.
                let store = try await OtherUser.makeDirectory(directories: ["oidc"])
                let foreignStore = try await sandbox.run(["token", "--profile", "work"], extra: ["XDG_STATE_HOME": store])
                try await OtherUser.remove(store)
                #expect(foreignStore.status == 7, "\(foreignStore.stderr)")
                #expect(foreignStore.stderr.contains("The token store directory \(store)/oidc belongs to user id \(other.uid)"), "\(foreignStore.stderr)")
            }
            #expect(await provider.grantCount("refresh_token") == 0)
            #expect(await provider.requestCount(.revocation) == 0)
            #expect(try sandbox.storedLogin("work") != nil)
            // The token store's directory gets the same answer, as before.
            try Self.chmod(sandbox.store, 0o777)
            let store = try await sandbox.run(["token", "--profile", "work"])
            #expect(store.status == 7 && store.stderr.contains("open to other users"), "\(store.stderr)")
            try Self.chmod(sandbox.store, 0o700)
            let fixed = try await sandbox.run(["token", "--profile", "work"])
            #expect(fixed.status == 0, "\(fixed.stderr)")
        }
    }

    @Test("a profiles directory that became open to others during the login is not written to: exit 7, no profile file")
    func refusedOnWrite() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let directory = sandbox.profileDirectory
            // A browser that first makes the (still missing) profiles directory 0777, as another user
            // could where the parent directory lets them.
            let script = sandbox.root.appendingPathComponent("browser.sh").path
            let text = "#!/bin/sh\nmkdir -p '\(directory)' && chmod 777 '\(directory)'\nexec \(sandbox.browser()) \"$@\"\n"
            #expect(FileManager.default.createFile(atPath: script, contents: Data(text.utf8), attributes: [.posixPermissions: 0o700]))
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider), extra: ["BROWSER": script])
            Self.expectRefused(login, directory, "login")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }
}
