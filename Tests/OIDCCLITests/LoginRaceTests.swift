import Foundation
import OIDC
import OIDCTestSupport
import OIDCTesting
import Testing

/// Security review 3, M1, as it was reproduced: another local program reads the start URL from the
/// browser's command line (`/proc/PID/cmdline`), opens it first and signs in with its own account.
/// The other program here is a separate process (`oidc-test-browser --race-argv`) that reads every
/// process's command line every 10 ms while `oidc login` runs, and the browser takes 300 ms to start.
@Suite("oidc login: another local program racing the browser", .timeLimit(.scaledMinutes(3)))
struct LoginRaceTests {
    static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Starts the other program watching for URLs on `port`; returns once it watches.
    static func startRacer(_ sandbox: LoginSandbox, port: Int) async throws -> (Task<CommandResult, any Error>, log: String, stop: String) {
        let log = sandbox.root.appendingPathComponent("racer.log").path
        let stop = sandbox.root.appendingPathComponent("racer.stop").path
        let racer = Task {
            try await OIDCBinary.run(
                ["--race-argv", "\(port)", "--seconds", "60", "--stop-file", stop, "--log", log], timeout: .scaled(.seconds(90)),
                executable: URL(fileURLWithPath: OIDCBinary.sibling("oidc-test-browser"))
            )
        }
        for _ in 0..<500 where !read(log).contains("race: watching") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(read(log).contains("race: watching"))
        return (racer, log, stop)
    }

    static func stopRacer(_ racer: Task<CommandResult, any Error>, stop: String) async throws {
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        #expect(try await racer.value.status == 0)
    }

    static let warning = "oidc: error: The sign-in link was opened a second time while this login was being completed: another program on this computer may have opened it first"

    @Test("the start URL is on no command line: the other program sees only the browser's private page, and the login completes")
    func startURLOnNoCommandLine() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let port = try freePort()  // for --listen: the other program watches this port only
            let (racer, racerLog, stop) = try await Self.startRacer(sandbox, port: port)
            let login = try await sandbox.run(
                LoginCommandTests.loginArguments(provider) + ["--listen", "127.0.0.1:\(port)"], browser: ["--delay-ms", "300"]
            )
            try await Self.stopRacer(racer, stop: stop)
            #expect(login.status == 0, "\(login.stderr)")
            let log = Self.read(racerLog)
            #expect(!log.contains("race: found"), "\(log)")
            #expect(log.contains("race: no URL of the listener in any command line"), "\(log)")
            // It did read the browser's command line: the private page was there, not the URL.
            #expect(log.contains("race: saw a private page on a command line: file://\(sandbox.runtime)/oidc-login-"), "\(log)")
            #expect(sandbox.log.contains("page file: mode 600 in a directory of mode 700"), "\(sandbox.log)")
            #expect(sandbox.log.contains("final: 200 /callback"), "\(sandbox.log)")
            #expect(try sandbox.storedLogin("work")?.subject == "test-user")
            // The page is gone once the login ends.
            #expect((try FileManager.default.contentsOfDirectory(atPath: sandbox.runtime)).isEmpty)
        }
    }

    @Test("with OIDC_BROWSER_HANDOFF=url the other program finds the URL and signs in first; the browser's visit aborts the login: exit 4, the warning, nothing stored")
    func racedThroughCommandLine() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let port = try freePort()  // for --listen: the other program watches this port only
            let (racer, racerLog, stop) = try await Self.startRacer(sandbox, port: port)
            let login = try await sandbox.run(
                LoginCommandTests.loginArguments(provider) + ["--listen", "127.0.0.1:\(port)"], browser: ["--delay-ms", "300"],
                extra: ["OIDC_BROWSER_HANDOFF": "url"]
            )
            try await Self.stopRacer(racer, stop: stop)
            let log = Self.read(racerLog)
            #expect(log.contains("race: found the listener's URL"), "\(log)")
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains(Self.warning), "\(login.stderr)")
            #expect(!login.stderr.contains("logged in as"))
            // Whoever came second got the page that says so.
            #expect((log + sandbox.log).contains("409"), "\(log)\n\(sandbox.log)")
            #expect(try sandbox.storedLogin("work") == nil)
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }

    @Test("--no-browser: another program that opens the printed URL first and signs in gets the login aborted when the browser opens it: exit 4, nothing stored")
    func racedThroughPrintedURL() async throws {
        try await LoginCommandTests.loginPageProvider { provider in
            let sandbox = LoginSandbox()
            let errors = sandbox.root.appendingPathComponent("login.stderr").path
            let arguments = (LoginCommandTests.loginArguments(provider) + ["--no-browser"]).map { "'\($0)'" }.joined(separator: " ")
            let login = Task {
                try await OIDCBinary.run(
                    ["-c", "exec '\(OIDCBinary.url.path)' \(arguments) 2> '\(errors)'"], environment: sandbox.environment(), timeout: .scaled(.seconds(90)),
                    executable: URL(fileURLWithPath: "/bin/sh")
                )
            }
            var start: String?
            for _ in 0..<1000 where start == nil {
                start = (Self.read(errors).firstMatch(of: /in your browser: (http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+)/)).map { String($0.1) }
                if start == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let url = try #require(start, "no start URL on stderr: \(Self.read(errors))")
            let browser = URL(fileURLWithPath: OIDCBinary.sibling("oidc-test-browser"))
            let otherLog = sandbox.root.appendingPathComponent("other.log").path
            let other = try await OIDCBinary.run([url, "--log", otherLog], timeout: .scaled(.seconds(60)), executable: browser)
            #expect(other.status == 0, "\(Self.read(otherLog))")
            #expect(Self.read(otherLog).contains("final: 200 /callback"))
            let users = try await OIDCBinary.run([url, "--log", sandbox.browserLog], timeout: .scaled(.seconds(60)), executable: browser)
            #expect(users.status == 1)
            #expect(sandbox.log.contains("final: 409"), "\(sandbox.log)")
            #expect(sandbox.log.contains("Sign-in aborted"), "\(sandbox.log)")

            let result = try await login.value
            #expect(result.status == 4, "\(Self.read(errors))")
            #expect(Self.read(errors).contains(Self.warning), "\(Self.read(errors))")
            #expect(try sandbox.storedLogin("work") == nil)
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }
}
