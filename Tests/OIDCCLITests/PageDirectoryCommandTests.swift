import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Security review 4, M1, through the binary: with no runtime directory and a `$TMPDIR` whose entries
/// other users can rename, `oidc login` makes the browser's private page elsewhere (`/tmp`, root's
/// and sticky), where nobody can move it aside and put their own page at its name.
@Suite("oidc login: where the browser's private page is made", .timeLimit(.scaledMinutes(2)))
struct PageDirectoryCommandTests {
    @Test("env -u XDG_RUNTIME_DIR TMPDIR=<mode 777 without the sticky bit>: the page is made under /tmp, not there; the login completes")
    func sharedTemporaryDirectory() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let shared = sandbox.root.appendingPathComponent("shared").path
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
            #expect(chmod(shared, 0o777) == 0)
            // The browser: records what it is given, then is the test browser.
            let seen = sandbox.root.appendingPathComponent("seen").path
            let script = sandbox.root.appendingPathComponent("browser").path
            try "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '\(seen)'\nexec \(sandbox.browser()) \"$@\"\n".write(toFile: script, atomically: true, encoding: .utf8)
            #expect(chmod(script, 0o755) == 0)
            let login = try await sandbox.run(
                LoginCommandTests.loginArguments(provider) + ["--browser", script], extra: ["XDG_RUNTIME_DIR": "", "TMPDIR": shared])
            #expect(login.status == 0, "\(login.stderr)")
            let given = (try? String(contentsOfFile: seen, encoding: .utf8)) ?? ""
            #expect(given.hasPrefix("file:///tmp/oidc-login-"), "\(given)")
            #expect(!given.contains(shared), "the page was made in a directory other users can rename entries in")
            #expect(sandbox.log.contains("final: 200 /callback"), "\(sandbox.log)")
            #expect(try sandbox.storedLogin("work")?.subject == "test-user")
        }
    }
}
