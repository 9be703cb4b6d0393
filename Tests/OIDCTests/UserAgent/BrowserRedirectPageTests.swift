import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// The system browser never gets an http(s) URL on its command line, where other local users read
/// it (`/proc/PID/cmdline`; security review 3, M1): it gets a private page that redirects there.
@Suite("System browser: the private redirect page", .timeLimit(.scaledMinutes(1)))
struct BrowserRedirectPageTests {
    static let url = URL(string: "http://127.0.0.1:4321/AbCdEfGhIjKlMnOpQrStUv")!

    /// A temporary directory with `record` (appends each argument as a line to `log`), `fail` (exits
    /// 3) and a private runtime directory `run` (0700); removed afterwards.
    func withScripts(_ body: (_ directory: String, _ log: URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("run"), withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.appendingPathComponent("run").path)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("log")
        for (name, body) in ["record": "for a in \"$@\"; do printf '%s\\n' \"$a\" >> '\(log.path)'; done", "fail": "exit 3"] {
            let path = directory.appendingPathComponent(name).path
            try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        try await body(directory.path, log)
    }

    func lines(_ log: URL) -> [String] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    static func pages(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("oidc-login-") }
    }

    @Test("the command gets a private page's file URL, not the URL: 0600 in a fresh 0700 directory under $XDG_RUNTIME_DIR, redirecting there; loginEnded removes it")
    func privatePage() async throws {
        try await withScripts { directory, log in
            let runtime = directory + "/run"
            let browser = SystemBrowser(command: "\(directory)/record", environment: ["XDG_RUNTIME_DIR": runtime, "TMPDIR": directory])
            #expect(browser.handoff == .redirectPage)
            try await browser.open(Self.url)
            let arguments = lines(log)
            #expect(arguments.count == 1)
            #expect(!arguments.joined().contains("4321") && !arguments.joined().contains(Self.url.path))
            let page = try #require(arguments.first.flatMap(URL.init(string:)))
            #expect(page.isFileURL)
            #expect(page.path.hasPrefix(runtime + "/oidc-login-") && page.lastPathComponent == "login.html")
            #expect(Self.mode(page.path) == 0o600)
            #expect(Self.mode(page.deletingLastPathComponent().path) == 0o700)
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.contains(#"<meta http-equiv="refresh" content="0; url=\#(Self.url.absoluteString)">"#))
            #expect(html.contains(#"<a href="\#(Self.url.absoluteString)" rel="noreferrer">"#))
            #expect(html.contains(#"<meta name="referrer" content="no-referrer">"#))
            #expect(!html.lowercased().contains("<script"))

            await browser.loginEnded(Self.url)
            #expect(!FileManager.default.fileExists(atPath: page.path))
            #expect(Self.pages(in: runtime).isEmpty)
        }
    }

    @Test("a runtime directory others may enter is passed over for $TMPDIR")
    func sharedRuntimeDirectory() async throws {
        try await withScripts { directory, log in
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory + "/run")
            let browser = SystemBrowser(command: "\(directory)/record", environment: ["XDG_RUNTIME_DIR": directory + "/run", "TMPDIR": directory + "/"])
            try await browser.open(Self.url)
            let page = try #require(lines(log).first.flatMap(URL.init(string:)))
            #expect(page.deletingLastPathComponent().deletingLastPathComponent().path == directory)
            #expect(Self.mode(page.deletingLastPathComponent().path) == 0o700)
            await browser.loginEnded(Self.url)
            #expect(Self.pages(in: directory).isEmpty)
        }
    }

    @Test("handoff .url, or OIDC_BROWSER_HANDOFF=url, gives the command the URL itself; anything else is the page")
    func urlHandoff() async throws {
        #expect(SystemBrowser(environment: ["OIDC_BROWSER_HANDOFF": "url"]).handoff == .url)
        #expect(SystemBrowser(environment: ["OIDC_BROWSER_HANDOFF": "URL"]).handoff == .url)
        #expect(SystemBrowser(environment: ["OIDC_BROWSER_HANDOFF": "page"]).handoff == .redirectPage)
        #expect(SystemBrowser(environment: ["OIDC_BROWSER_HANDOFF": "nonsense"]).handoff == .redirectPage)
        #expect(SystemBrowser(environment: ["OIDC_BROWSER_HANDOFF": "url"], handoff: .redirectPage).handoff == .redirectPage)
        try await withScripts { directory, log in
            let environment = ["XDG_RUNTIME_DIR": directory + "/run", "OIDC_BROWSER_HANDOFF": "url"]
            try await SystemBrowser(command: "\(directory)/record", environment: environment).open(Self.url)
            #expect(lines(log) == [Self.url.absoluteString])
            #expect(Self.pages(in: directory + "/run").isEmpty)
        }
    }

    @Test("a URL that is not http(s) is given as it is; quotes and ampersands cannot end the page's attribute")
    func otherURLs() async throws {
        try await withScripts { directory, log in
            let environment = ["XDG_RUNTIME_DIR": directory + "/run"]
            let mail = try #require(URL(string: "mailto:someone@example.com"))
            try await SystemBrowser(command: "\(directory)/record", environment: environment).open(mail)
            #expect(lines(log) == [mail.absoluteString])

            let odd = try #require(URL(string: "http://127.0.0.1:1/cb?a=1&b='x'"))
            let browser = SystemBrowser(command: "\(directory)/record", environment: environment)
            try await browser.open(odd)
            let page = try #require(lines(log).last.flatMap(URL.init(string:)))
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.contains("url=http://127.0.0.1:1/cb?a=1&amp;b=%27x%27\">"))
            await browser.loginEnded(odd)
        }
    }

    @Test("when no command can be started, the page is removed before the error is thrown")
    func removedOnFailure() async throws {
        try await withScripts { directory, _ in
            let browser = SystemBrowser(environment: ["BROWSER": "\(directory)/fail", "XDG_RUNTIME_DIR": directory + "/run"])
            let error = await #expect(throws: OIDCError.self) { try await browser.open(Self.url) }
            #expect(error?.code == .invalidArgument)
            #expect(Self.pages(in: directory + "/run").isEmpty)
        }
    }
}
