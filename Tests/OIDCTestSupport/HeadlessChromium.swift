public import Foundation
import OIDC
#if canImport(Glibc)
import Glibc
#endif

/// A real browser for the tests of what a person sees: Debian's headless Chromium, driven over the
/// W3C WebDriver protocol (https://www.w3.org/TR/webdriver2/) by its `chromedriver`, started on a
/// free port of 127.0.0.1 for one test and stopped after it, with a profile of its own.
///
/// `make test-package` names the driver in `OIDC_CHROMEDRIVER` (`scripts/install-deps.sh test`
/// installs `chromium` and `chromium-driver`); the suites that need it are enabled by that variable.
/// When the body fails, a screenshot and the page's source are kept under `OIDC_TEST_ARTIFACTS`
/// (`.build/test-artifacts` by default), and the error says where.
public final class HeadlessChromium: Sendable {
    /// `OIDC_CHROMEDRIVER`: the chromedriver to start, or `nil` (the browser suites are then off).
    public static let driver: String? = ProcessInfo.processInfo.environment["OIDC_CHROMEDRIVER"].flatMap { $0.isEmpty ? nil : $0 }

    /// Where the screenshots of failed browser tests go.
    public static var artifacts: URL {
        if let directory = ProcessInfo.processInfo.environment["OIDC_TEST_ARTIFACTS"], !directory.isEmpty {
            return URL(fileURLWithPath: directory)
        }
        // Tests/OIDCTestSupport/HeadlessChromium.swift → the package's .build/test-artifacts.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts")
    }

    /// A WebDriver command the browser refused, or a page that never came.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private let endpoint: String
    private let session: String

    private init(endpoint: String, session: String) {
        self.endpoint = endpoint
        self.session = session
    }

    /// Runs `body` with a new headless Chromium; `name` names the screenshot kept if it throws.
    public static func with<T>(_ name: String, _ body: (HeadlessChromium) async throws -> T) async throws -> T {
        guard let driver else { throw Failure(description: "set OIDC_CHROMEDRIVER to Debian's chromedriver (make test-package does)") }
        guard FileManager.default.isExecutableFile(atPath: driver) else {
            throw Failure(description: "OIDC_CHROMEDRIVER=\(driver) is not a program: install chromium and chromium-driver (scripts/install-deps.sh test)")
        }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-chromium-\(UUID().uuidString)")
        // Last: no browser of this profile is left running (a driver killed before it closed its
        // browser leaves it behind), then the profile goes.
        defer {
            killBrowsers(of: profile.path)
            try? FileManager.default.removeItem(at: profile)
        }
        // --port=0: the driver takes a free port and says which.
        let process = try HelperProcess(executable: driver, ["--port=0"], watchdog: TestTime.scaled(.seconds(60)))
        defer { process.kill() }
        var port: Int?
        for _ in 0..<8 {
            guard let line = await process.nextLine() else { break }
            if let match = line.firstMatch(of: /started successfully on port (\d+)/) { port = Int(match.1); break }
        }
        guard let port else { throw Failure(description: "chromedriver did not start: \(process.standardError)") }
        let endpoint = "http://127.0.0.1:\(port)"
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    // Bounds of the browser's own: a page load, a script (milliseconds).
                    "timeouts": ["pageLoad": Int(30_000 * TestTime.scale), "script": Int(10_000 * TestTime.scale), "implicit": 0],
                    "goog:chromeOptions": [
                        "binary": ProcessInfo.processInfo.environment["OIDC_CHROMIUM"] ?? "/usr/bin/chromium",
                        // No sandbox: CI also runs the suite as container root, where Chromium's
                        // sandbox cannot start; the browser only ever opens the test's loopback pages.
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                            "--password-store=basic", "--window-size=1024,768", "--user-data-dir=\(profile.path)",
                        ],
                    ],
                ]
            ]
        ]
        let created = try await command(endpoint, "POST", "/session", capabilities)
        guard let session = (created as? [String: Any])?["sessionId"] as? String else {
            throw Failure(description: "chromedriver started no browser: \(String(describing: created))")
        }
        let browser = HeadlessChromium(endpoint: endpoint, session: session)
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            let kept = await browser.keep(name)
            await browser.quit()
            throw Failure(description: "\(error)\(kept.map { " (kept: \($0))" } ?? "")")
        }
    }

    // MARK: Pages

    /// Opens `url` and waits for its page to load.
    public func open(_ url: String) async throws { _ = try await send("POST", "/url", ["url": url]) }

    /// Reloads the page.
    public func reload() async throws { _ = try await send("POST", "/refresh", [String: Any]()) }

    /// Goes back one page in the history.
    public func back() async throws { _ = try await send("POST", "/back", [String: Any]()) }

    /// The page's URL.
    public func url() async throws -> String { try await send("GET", "/url") as? String ?? "" }

    /// The page's title.
    public func title() async throws -> String { try await send("GET", "/title") as? String ?? "" }

    /// The page's visible text.
    public func text() async throws -> String { try await text(of: "body") }

    /// The visible text of the first element `selector` (CSS) finds.
    public func text(of selector: String) async throws -> String {
        try await send("GET", "/element/\(try await element(selector))/text") as? String ?? ""
    }

    /// Clicks the first element `selector` (CSS) finds, as a person would.
    public func click(_ selector: String) async throws {
        _ = try await send("POST", "/element/\(try await element(selector))/click", [String: Any]())
    }

    /// Types `text` into the first field `selector` (CSS) finds, as a person would.
    public func type(_ text: String, into selector: String) async throws {
        _ = try await send("POST", "/element/\(try await element(selector))/value", ["text": text])
    }

    /// Runs `script` in the page (its `arguments` as `arguments[0]`…) and returns what it returns.
    @discardableResult
    public func run(_ script: String, _ arguments: [String] = []) async throws -> Any? {
        try await send("POST", "/execute/sync", ["script": script, "args": arguments])
    }

    /// Waits until `condition` holds of the page (checked every 50 ms, for at most 15 s times the
    /// tests' time scale); `what` says what was awaited when it never does. An error of the
    /// condition (a page still loading, say) counts as "not yet".
    public func wait(for what: String, _ condition: (HeadlessChromium) async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + TestTime.scaled(.seconds(15))
        var lastError: (any Error)?
        while clock.now < deadline {
            do {
                if try await condition(self) { return }
            } catch { lastError = error }
            try await Task.sleep(for: .milliseconds(50))
        }
        let page = (try? await url()) ?? "?"
        let text = (try? await text().prefix(300)).map(String.init) ?? ""
        throw Failure(description: "waited in vain for \(what)\(lastError.map { " (last error: \($0))" } ?? ""); the page is \(page): \(text)")
    }

    /// Waits until the page's URL is `url` (a redirect chain has ended there).
    public func wait(forURL url: String) async throws {
        try await wait(for: "the page \(url)") { try await $0.url() == url }
    }

    // MARK: Cookies

    /// A cookie as the browser keeps it.
    public struct Cookie: Sendable {
        public var name: String
        public var httpOnly: Bool
        public var secure: Bool
        public var sameSite: String
    }

    /// The cookies the browser would send to the page's URL.
    public func cookies() async throws -> [Cookie] {
        let all = try await send("GET", "/cookie") as? [[String: Any]] ?? []
        return all.map {
            Cookie(
                name: $0["name"] as? String ?? "", httpOnly: $0["httpOnly"] as? Bool ?? false, secure: $0["secure"] as? Bool ?? false,
                sameSite: $0["sameSite"] as? String ?? "")
        }
    }

    // MARK: The protocol

    private func element(_ selector: String) async throws -> String {
        let found = try await send("POST", "/element", ["using": "css selector", "value": selector]) as? [String: Any]
        // The W3C element reference's key.
        guard let id = found?["element-6066-11e4-a52e-4f735466cecf"] as? String else {
            throw Failure(description: "no element \(selector) on \(try await url())")
        }
        return id
    }

    private func send(_ method: String, _ path: String, _ body: Any? = nil) async throws -> Any? {
        try await Self.command(endpoint, method, "/session/\(session)" + path, body)
    }

    /// One WebDriver command: its `value`, or the driver's error as a ``Failure``.
    private static func command(_ endpoint: String, _ method: String, _ path: String, _ body: Any?) async throws -> Any? {
        guard let url = URL(string: endpoint + path) else { throw Failure(description: "not a URL: \(endpoint + path)") }
        var request = HTTPRequest(method: method, url: url)
        if let body {
            request.headers = ["Content-Type": "application/json; charset=utf-8"]
            request.body = Array(try JSONSerialization.data(withJSONObject: body))
        }
        // A page load, a screenshot: longer and larger than a provider's answer.
        let response = try await NIOHTTPTransport.shared.send(
            request, options: HTTPRequestOptions(timeout: TestTime.scaled(.seconds(40)), maximumResponseSize: 32 << 20))
        let json = try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])
        let value = (json as? [String: Any])?["value"]
        guard response.status == 200 else {
            let error = value as? [String: Any]
            throw Failure(
                description: "WebDriver \(method) \(path.split(separator: "/").dropFirst(2).joined(separator: "/")): \(response.status) "
                    + "\(error?["error"] as? String ?? "") \((error?["message"] as? String ?? "").prefix(400))")
        }
        return value is NSNull ? nil : value
    }

    /// Saves a screenshot and the page's source as `name`.png and `name`.html; where, or `nil`.
    private func keep(_ name: String) async -> String? {
        let directory = Self.artifacts
        guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil else { return nil }
        let base = directory.appendingPathComponent(name.replacingOccurrences(of: "/", with: "-"))
        var kept: [String] = []
        if let encoded = try? await send("GET", "/screenshot") as? String, let png = Data(base64Encoded: encoded),
            (try? png.write(to: base.appendingPathExtension("png"))) != nil
        {
            kept.append(base.appendingPathExtension("png").path)
        }
        if let source = try? await send("GET", "/source") as? String, (try? Data(source.utf8).write(to: base.appendingPathExtension("html"))) != nil {
            kept.append(base.appendingPathExtension("html").path)
        }
        return kept.isEmpty ? nil : kept.joined(separator: ", ")
    }

    /// SIGKILLs every process whose command line names `profile` (the browser and its helpers).
    /// Chromium rewrites its process title (one line, spaces for the NULs), so the marker is looked
    /// for anywhere in it; the profile's name ends in a UUID.
    private static func killBrowsers(of profile: String) {
        let marker = Array("--user-data-dir=\(profile)".utf8)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(),
                let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), line.count < 1 << 20
            else { continue }
            if Array(line).firstRange(of: marker) != nil { kill(pid, SIGKILL) }
        }
    }

    /// Closes the browser (the driver is killed after).
    private func quit() async { _ = try? await Self.command(endpoint, "DELETE", "/session/\(session)", nil) }
}
