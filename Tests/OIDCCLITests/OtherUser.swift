import Foundation
import OIDCTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The other local user of the tests about other users (``OtherLocalUser`` of OIDCTesting), with
/// what the command's tests use: a `CommandResult` and a test failure when set-up fails.
enum OtherUser {
    static var ids: (uid: uid_t, gid: gid_t)? { OtherLocalUser.ids }
    static var available: Bool { OtherLocalUser.available }
    static var name: String { OtherLocalUser.name }
    static let unavailable = Comment(rawValue: OtherLocalUser.unavailable)

    /// Runs `arguments` (an absolute program path first) as the other user.
    @discardableResult
    static func run(_ arguments: [String]) async throws -> CommandResult {
        let result = try await OtherLocalUser.run(arguments)
        return CommandResult(status: result.status, stdout: result.output, stderr: result.errors)
    }

    /// A directory of the other user's under /tmp (0755) with their `files` (0644) and `directories` (0700).
    static func makeDirectory(files: [String: String] = [:], directories: [String] = []) async throws -> String {
        try await OtherLocalUser.makeDirectory(files: files, directories: directories)
    }

    static func remove(_ directory: String) async throws { try await OtherLocalUser.remove(directory) }
}

@Suite("The tests about other users have a second real account")
struct OtherUserTests {
    @Test("the other user .ci/run names is usable, and really someone else: their directory is theirs, and they cannot read ours")
    func configured() async throws {
        guard OtherLocalUser.named || OtherUser.available else { return }
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
