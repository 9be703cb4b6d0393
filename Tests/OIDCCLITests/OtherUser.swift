import Foundation
import OIDCTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A second, real local account: "another local user" for the tests about other users (their file,
/// their directory). `nobody`, or the account `$OIDC_TEST_OTHER_USER` names.
///
/// The suite runs as an ordinary user (CONTRIBUTING.md), who cannot become anyone else: `.ci/run`
/// lets its account run commands as `nobody` and nothing more (`sudo -u nobody`). As root, a command
/// becomes theirs through `setpriv`. Only the other user's own actions go through it (creating their
/// file or directory); the checks themselves run as the test's user. Without either way, the tests
/// that need one are skipped, saying why: checked as the same user, they would pass for the wrong
/// reason.
enum OtherUser {
    static var name: String { ProcessInfo.processInfo.environment["OIDC_TEST_OTHER_USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "nobody" }

    /// The account's user and group ids, when it exists.
    static let ids: (uid: uid_t, gid: gid_t)? = {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()

    /// The words that run a command as the other user, or `nil` when this process cannot.
    static let prefix: [String]? = {
        guard let ids, ids.uid != getuid() else { return nil }
        if getuid() == 0 {
            let setpriv = "/usr/bin/setpriv"
            guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
            return [setpriv, "--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "--"]
        }
        guard let sudo = ["/usr/bin/sudo", "/bin/sudo"].first(where: FileManager.default.isExecutableFile(atPath:)) else { return nil }
        let words = [sudo, "-n", "-u", name, "--"]
        let probe = try? ChildProcess(words[0], Array(words.dropFirst()) + ["/usr/bin/id", "-u"], environment: ["PATH": "/usr/bin:/bin"])
        guard let probe, probe.waitForExit() == 0 else { return nil }
        return words
    }()

    static var available: Bool { prefix != nil }

    /// Why a test that needs the other user did not run.
    static let unavailable: Comment = "needs a second local account: run as root, or let this user run commands as `nobody` (`sudo -n -u nobody`), as .ci/run does"

    /// Runs `arguments` (an absolute program path first) as the other user; returns its result.
    @discardableResult
    static func run(_ arguments: [String]) async throws -> CommandResult {
        let prefix = try #require(prefix, unavailable)
        return try await OIDCBinary.run(
            Array(prefix.dropFirst()) + arguments, environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(30),
            executable: URL(fileURLWithPath: prefix[0]))
    }

    /// A directory of the other user's under /tmp (mode 0755: anyone may look in, only they may
    /// change it), holding `files` (their name to their contents, mode 0644) and `directories`
    /// (mode 0700, created with their parents). Remove it with ``remove(_:)``.
    static func makeDirectory(files: [String: String] = [:], directories: [String] = []) async throws -> String {
        var script = #"set -e; umask 022; d=$(mktemp -d /tmp/oidc-other-user.XXXXXXXX); chmod 755 "$d"; cd "$d""#
        for (name, contents) in files.sorted(by: { $0.key < $1.key }) {
            script += "; mkdir -p \"$(dirname '\(name)')\"; printf '%s' '\(contents)' > '\(name)'"
        }
        for name in directories { script += "; mkdir -p '\(name)'; chmod 700 '\(name)'" }
        script += #"; printf '%s' "$d""#
        let made = try await run(["/bin/sh", "-c", script])
        try #require(made.status == 0, "the other user could not make their directory: \(made.stderr)")
        return made.stdout
    }

    /// Removes a directory ``makeDirectory(files:directories:)`` made, as its owner.
    static func remove(_ directory: String) async throws {
        guard directory.hasPrefix("/tmp/oidc-other-user.") else { return }
        try await run(["/bin/rm", "-rf", "--", directory])
    }
}

@Suite("The tests about other users have a second real account")
struct OtherUserTests {
    @Test("the other user .ci/run names is usable, and really someone else: their directory is theirs, and they cannot read ours")
    func configured() async throws {
        let named = ProcessInfo.processInfo.environment["OIDC_TEST_OTHER_USER"].map { !$0.isEmpty } ?? false
        guard named || OtherUser.available else { return }
        try #require(OtherUser.available, "OIDC_TEST_OTHER_USER=\(OtherUser.name) is set, but this process cannot run a command as that user: \(OtherUser.unavailable)")
        let ids = try #require(OtherUser.ids)
        let directory = try await OtherUser.makeDirectory(files: ["theirs": "x"])
        var info = stat()
        #expect(lstat(directory + "/theirs", &info) == 0 && info.st_uid == ids.uid && info.st_uid != getuid())
        try await OtherUser.remove(directory)

        let ours = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-ours-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: ours, contents: Data("private".utf8), attributes: [.posixPermissions: 0o600]))
        defer { try? FileManager.default.removeItem(atPath: ours) }
        let read = try await OtherUser.run(["/bin/cat", ours])
        #expect(read.status != 0 && !read.stdout.contains("private"), "the other user read a 0600 file of ours")
    }
}
