import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// Command templates, `$BROWSER` lists and failures. These hand the command the URL itself
/// (`handoff: .url`) to see exactly what each word gets; the default private page is
/// BrowserRedirectPageTests'.
@Suite("System browser launcher", .timeLimit(.scaledMinutes(1)))
struct BrowserLauncherTests {
    static let url = URL(string: "http://127.0.0.1:4321/?a=1&b=%20x")!

    /// A temporary directory with `record` (appends each argument as a line to `log`), `fail`
    /// (exits 3) and `linger` (records, then runs on for 3 s); removed afterwards.
    func withScripts(_ body: (_ directory: String, _ log: URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("log")
        let scripts = [
            "record": "for a in \"$@\"; do printf '%s\\n' \"$a\" >> '\(log.path)'; done",
            "fail": "exit 3",
            "linger": "printf '%s\\n' \"$@\" >> '\(log.path)'; sleep 3",
            "xdg-open": "exit 0",
            "wslview": "exit 0",
        ]
        for (name, body) in scripts {
            let path = directory.appendingPathComponent(name).path
            try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        try await body(directory.path, log)
    }

    func lines(_ log: URL) -> [String] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("$BROWSER gets the URL in place of %s, and %% is a literal %")
    func placeholder() async throws {
        try await withScripts { directory, log in
            let browser = SystemBrowser(environment: ["BROWSER": "\(directory)/record --new-tab %s --name=%%s 100%%"], handoff: .url)
            try await browser.open(Self.url)
            #expect(lines(log) == ["--new-tab", Self.url.absoluteString, "--name=%s", "100%"])
        }
    }

    @Test("a command without %s gets the URL as its last argument")
    func appended() async throws {
        try await withScripts { directory, log in
            try await SystemBrowser(environment: ["BROWSER": "\(directory)/record  --private "], handoff: .url).open(Self.url)
            #expect(lines(log) == ["--private", Self.url.absoluteString])
        }
    }

    @Test("$BROWSER is a colon-separated list: a failing or missing command makes way for the next")
    func colonList() async throws {
        try await withScripts { directory, log in
            let environment = ["BROWSER": "\(directory)/fail:no-such-browser-here::record", "PATH": directory]
            try await SystemBrowser(environment: environment, handoff: .url).open(Self.url)
            #expect(lines(log) == [Self.url.absoluteString])
        }
    }

    @Test("an explicit command is tried alone, before $BROWSER")
    func explicitCommand() async throws {
        try await withScripts { directory, log in
            let browser = SystemBrowser(command: "record --explicit", environment: ["BROWSER": "fail", "PATH": directory], handoff: .url)
            #expect(browser.candidates == [["record", "--explicit", "%s"]])
            try await browser.open(Self.url)
            #expect(lines(log) == ["--explicit", Self.url.absoluteString])
        }
    }

    @Test("a browser that keeps running counts as opened")
    func lingering() async throws {
        try await withScripts { directory, log in
            let started = ContinuousClock.now
            try await SystemBrowser(command: "\(directory)/linger", handoff: .url).open(Self.url)
            #expect(ContinuousClock.now - started >= .milliseconds(1500))
            #expect(lines(log) == [Self.url.absoluteString])
        }
    }

    @Test("when every command fails the error names them, not the URL")
    func allFail() async throws {
        try await withScripts { directory, _ in
            let browser = SystemBrowser(environment: ["BROWSER": "\(directory)/fail:no-such-browser-here", "PATH": directory])
            let error = await #expect(throws: OIDCError.self) { try await browser.open(Self.url) }
            #expect(error?.code == .invalidArgument)
            let message = error?.message ?? ""
            #expect(message.hasPrefix("No browser could be opened (tried: "))
            #expect(message.contains("fail: exited with status 3"))
            #expect(message.contains("no-such-browser-here: not found"))
            #expect(message.hasSuffix("open the URL yourself."))
            #expect(!message.contains("4321"))
        }
    }

    @Test("candidates split $BROWSER on colons and words on spaces")
    func candidatesFromBrowser() {
        let browser = SystemBrowser(environment: ["BROWSER": "firefox:chromium --incognito:b --literal=%%s:"])
        #expect(browser.candidates == [["firefox", "%s"], ["chromium", "--incognito", "%s"], ["b", "--literal=%%s", "%s"]])
        #expect(browser.isAvailable)
    }

    #if os(Linux)
    @Test("under WSL wslview comes first, then xdg-open")
    func wslCandidates() {
        let browser = SystemBrowser(environment: ["WSL_DISTRO_NAME": "Ubuntu"])
        #expect(browser.candidates == [["wslview", "%s"], ["xdg-open", "%s"]])
    }

    @Test("without $BROWSER, xdg-open is the last resort")
    func linuxCandidates() {
        #expect(SystemBrowser(environment: [:]).candidates.last == ["xdg-open", "%s"])
        #expect(SystemBrowser(environment: ["BROWSER": " : "]).candidates.last == ["xdg-open", "%s"])
    }

    @Test("isAvailable: no PATH and no display means no browser")
    func unavailable() async throws {
        #expect(!SystemBrowser(environment: [:]).isAvailable)
        try await withScripts { directory, _ in
            #expect(!SystemBrowser(environment: ["PATH": directory]).isAvailable)
            #expect(SystemBrowser(environment: ["PATH": directory, "DISPLAY": ":0"]).isAvailable)
            #expect(SystemBrowser(environment: ["PATH": directory, "WAYLAND_DISPLAY": "wayland-0"]).isAvailable)
            #expect(SystemBrowser(environment: ["PATH": directory, "WSL_DISTRO_NAME": "Ubuntu"]).isAvailable)
            #expect(!SystemBrowser(environment: ["DISPLAY": ":0"]).isAvailable)
        }
        #expect(SystemBrowser(command: "firefox", environment: [:]).isAvailable)
        #expect(!SystemBrowser(command: "  ", environment: [:]).isAvailable)
    }

    @Test("with nothing to try, open throws invalidArgument")
    func nothingToTry() async {
        let error = await #expect(throws: OIDCError.self) { try await SystemBrowser(environment: [:]).open(Self.url) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("xdg-open: not found") == true)
    }
    #endif
}
