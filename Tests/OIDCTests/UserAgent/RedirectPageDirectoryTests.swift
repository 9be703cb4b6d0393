import Foundation
@testable import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Security review 4, M1: the private page's directory is made only where no other local user can
/// rename entries (else that user moves it aside and puts a page of their own at its name), and it
/// is removed through its descriptor, never through a name someone else may have taken.
@Suite("System browser: where the private page may be made", .timeLimit(.scaledMinutes(1)))
struct RedirectPageDirectoryTests {
    static let url = URL(string: "http://127.0.0.1:4321/AbCdEfGhIjKlMnOpQrStUv")!

    /// A fresh directory of this user's, mode 0755, under `/tmp`, with a `record` browser command that
    /// appends its arguments to `log`; removed afterwards.
    func withDirectory(_ body: (_ directory: String, _ record: String, _ log: String) async throws -> Void) async throws {
        let directory = "/tmp/page-directory-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer {
            // A test may leave a 0700 directory of another owner's mode behind; make it removable.
            _ = try? FileManager.default.removeItem(atPath: directory)
        }
        let log = directory + "/log"
        let record = directory + "/record"
        try "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '\(log)'; done\n".write(toFile: record, atomically: true, encoding: .utf8)
        chmod(record, 0o755)
        try await body(directory, record, log)
    }

    /// Makes `path` a directory of `mode` (the umask does not apply).
    static func makeDirectory(_ path: String, mode: mode_t) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(chmod(path, mode) == 0)
    }

    static func pages(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("oidc-login-") }
    }

    /// Opens the URL with `record` in `environment` and returns the directory the page was made in.
    static func pageParent(record: String, log: String, environment: [String: String]) async throws -> String {
        let browser = SystemBrowser(command: record, environment: environment)
        try await browser.open(url)
        let line = try #require(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").last)
        let page = try #require(URL(string: String(line)))
        #expect(page.isFileURL && page.lastPathComponent == "login.html")
        #expect(FileManager.default.fileExists(atPath: page.path))
        await browser.loginEnded(url)
        #expect(!FileManager.default.fileExists(atPath: page.path))
        return page.deletingLastPathComponent().deletingLastPathComponent().path
    }

    @Test("a $TMPDIR that other users can write, without the sticky bit, is passed over for /tmp (root's, sticky)")
    func sharedTemporaryDirectory() async throws {
        try await withDirectory { directory, record, log in
            let shared = directory + "/shared"
            try Self.makeDirectory(shared, mode: 0o777)
            let parent = try await Self.pageParent(record: record, log: log, environment: ["TMPDIR": shared])
            #expect(parent != shared)
            #expect(parent == "/tmp")
            #expect(Self.pages(in: shared).isEmpty)
        }
    }

    @Test("a private $TMPDIR inside a directory others can write is passed over: its parent's entries can be renamed")
    func sharedAncestor() async throws {
        try await withDirectory { directory, record, log in
            let shared = directory + "/shared"
            try Self.makeDirectory(shared, mode: 0o777)
            try Self.makeDirectory(shared + "/mine", mode: 0o700)
            let parent = try await Self.pageParent(record: record, log: log, environment: ["TMPDIR": shared + "/mine"])
            #expect(parent == "/tmp")
            #expect(Self.pages(in: shared + "/mine").isEmpty)
        }
    }

    @Test("a sticky $TMPDIR of another user is passed over (made by that user: nobody); one of your own is taken")
    func stickyDirectoryOwners() async throws {
        try await withDirectory { directory, record, log in
            // One of your own: only an entry's owner may rename it there, so it is safe and taken.
            let sticky = directory + "/sticky"
            try Self.makeDirectory(sticky, mode: 0o1777)
            #expect(try await Self.pageParent(record: record, log: log, environment: ["TMPDIR": sticky]) == sticky)

            // One of another user, made by that user (setpriv as root, sudo -u nobody as an ordinary user):
            // its owner may rename anything in it.
            guard OtherLocalUser.available else { return }
            let theirs = try await OtherLocalUser.makeDirectory(mode: 0o1777)
            let parent = try await Self.pageParent(record: record, log: log, environment: ["TMPDIR": theirs])
            let pages = Self.pages(in: theirs)
            let refused = (try? PageDirectory.check(theirs, privateToUser: false).get()) == nil
            try await OtherLocalUser.remove(theirs)
            #expect(parent == "/tmp")
            #expect(pages.isEmpty)
            #expect(refused, "a sticky directory of user id \(OtherLocalUser.ids?.uid ?? 0) was accepted")
        }
    }

    @Test("the rule: a private directory of yours and root's sticky /tmp pass; a 0777 one without the sticky bit and a link's shared target do not")
    func rule() async throws {
        try await withDirectory { directory, _, _ in
            #expect(try PageDirectory.check("/tmp", privateToUser: false).get() == "/tmp")
            try Self.makeDirectory(directory + "/private", mode: 0o700)
            #expect(try PageDirectory.check(directory + "/private/", privateToUser: true).get() == directory + "/private")
            try Self.makeDirectory(directory + "/open", mode: 0o777)
            let refusal = #expect(throws: PageDirectory.Refusal.self) { try PageDirectory.check(directory + "/open", privateToUser: false).get() }
            #expect(refusal?.description.contains("writable by other users without the sticky bit (mode 777)") == true)
            #expect(symlink(directory + "/open", directory + "/link") == 0)
            #expect(throws: PageDirectory.Refusal.self) { try PageDirectory.check(directory + "/link", privateToUser: false).get() }
            // $XDG_RUNTIME_DIR must be yours alone: 0755 is refused for it, though fine for $TMPDIR.
            try Self.makeDirectory(directory + "/readable", mode: 0o755)
            #expect(throws: PageDirectory.Refusal.self) { try PageDirectory.check(directory + "/readable", privateToUser: true).get() }
            #expect(try PageDirectory.check(directory + "/readable", privateToUser: false).get() == directory + "/readable")
            #expect(throws: PageDirectory.Refusal.self) { try PageDirectory.check("relative", privateToUser: false).get() }
        }
    }

    @Test("when no candidate passes, the page is refused with what to set, and nothing is written")
    func refusedEverywhere() async throws {
        try await withDirectory { directory, _, _ in
            let shared = directory + "/shared"
            try Self.makeDirectory(shared, mode: 0o777)
            let error = #expect(throws: OIDCError.self) {
                try PageDirectory.parent(environment: ["TMPDIR": shared, "XDG_RUNTIME_DIR": shared], temporary: shared)
            }
            #expect(error?.code == .invalidArgument)
            for part in ["$TMPDIR", "$XDG_RUNTIME_DIR", "XDG_RUNTIME_DIR or TMPDIR", "OIDC_BROWSER_HANDOFF=url", "mode 777"] {
                #expect(error?.message.contains(part) == true, "\(error?.message ?? "")")
            }
            #expect(Self.pages(in: shared).isEmpty)
        }
    }

    @Test("removing the page after its directory was moved aside leaves what was put at its name alone", arguments: ["directory", "link"])
    func removalAfterSwap(_ replacement: String) async throws {
        try await withDirectory { directory, _, _ in
            let runtime = directory + "/run"
            try Self.makeDirectory(runtime, mode: 0o700)
            let page = try RedirectPage.write(redirectingTo: Self.url, environment: ["XDG_RUNTIME_DIR": runtime])
            #expect(page.directory.hasPrefix(runtime + "/oidc-login-"))
            // Another program moves the page's directory aside and puts its own at the name.
            let aside = runtime + "/moved"
            #expect(rename(page.directory, aside) == 0)
            let planted = directory + "/planted"
            try Self.makeDirectory(planted, mode: 0o700)
            try "planted".write(toFile: planted + "/login.html", atomically: false, encoding: .utf8)
            if replacement == "link" {
                #expect(symlink(planted, page.directory) == 0)
            } else {
                try Self.makeDirectory(page.directory, mode: 0o700)
                try "planted".write(toFile: page.directory + "/login.html", atomically: false, encoding: .utf8)
            }
            page.remove()
            #expect(FileManager.default.fileExists(atPath: planted + "/login.html"), "a page elsewhere was deleted through a link")
            #expect(FileManager.default.fileExists(atPath: page.directory + "/login.html"), "the page put at the name was deleted")
            // The real page was removed through the directory's descriptor, wherever it went.
            #expect(!FileManager.default.fileExists(atPath: aside + "/login.html"))
        }
    }
}
