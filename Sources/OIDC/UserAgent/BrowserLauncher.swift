public import Foundation

/// Opens a URL in the user's browser: the authorization URL of a loopback login (RFC 8252 §7.3,
/// §8.12: an external user agent, never an embedded one).
///
/// ``SystemBrowser`` is the real one; tests plug in their own (one that follows the redirect with an
/// HTTP client, for example). Implementations must not log or print the URL: the caller decides
/// where it is shown.
public protocol BrowserLauncher: Sendable {
    /// Opens `url`; returns once the browser has been started.
    ///
    /// - Throws: ``OIDCError`` when no browser could be started.
    func open(_ url: URL) async throws(OIDCError)

    /// The login that `url` was opened for has ended (signed in, failed, aborted, timed out or
    /// cancelled): remove whatever ``open(_:)`` left behind for it. ``LoopbackLogin`` calls it once
    /// the wait for the callback is over, on every path. The default does nothing.
    func loginEnded(_ url: URL) async
}

extension BrowserLauncher {
    /// Does nothing: a launcher that leaves nothing behind has nothing to remove.
    public func loginEnded(_ url: URL) async {}
}

/// The user's browser (RFC 8252 §8.12): an explicit command (the CLI's `--browser`), else `$BROWSER`, else the
/// platform's opener (`wslview` under WSL, then `xdg-open`, on Linux and the BSDs; `open` on macOS).
///
/// An http(s) URL never goes on the browser's command line, where other local users can read it
/// (`/proc/PID/cmdline`) and, with a loopback login's start URL, open it before the user's browser
/// does. The command gets the `file://` URL of a private page instead: `login.html`, mode 0600, in a
/// fresh directory of mode 0700 under `$XDG_RUNTIME_DIR` (else `$TMPDIR`, else `/tmp`: the first
/// in which only this user and root can rename entries, and in none of the directories above it
/// either; with none, ``open(_:)`` refuses and says what to set), which redirects to the URL
/// (`<meta http-equiv="refresh">` and a plain link; no script). The page is removed by
/// ``loginEnded(_:)``, which ``LoopbackLogin`` calls when the login ends. ``handoff`` `= .url` (or
/// `OIDC_BROWSER_HANDOFF=url` in the environment) gives the command the URL itself, for a browser
/// that cannot open local files: a sandboxed one (a snap or flatpak browser does not see the
/// host's `/tmp` or `/run/user`), or a `$BROWSER` helper that forwards URLs to another machine (an
/// editor's remote session).
///
/// `$BROWSER` is a colon-separated list of commands, tried in order. A command's words are split on
/// spaces with no shell and no quoting; `%s` in a word is replaced by the URL and `%%` by `%`; a
/// command without `%s` gets the URL as its last argument. Bare names are looked up on `$PATH` of
/// the given environment; a word with a `/` is a path.
///
/// The browser is started with the given `environment`, standard input from `/dev/null` and standard output
/// sent to this process's standard error (standard output belongs to the caller's results). It is
/// not waited for, since a browser may keep running, but a command that exits non-zero within
/// 2 seconds has failed and the next one is tried.
public struct SystemBrowser: BrowserLauncher {
    /// What the browser command is given for an http(s) URL.
    public enum Handoff: String, Sendable, CaseIterable {
        /// The `file://` URL of a private page that redirects to the URL: the URL is on no command
        /// line. `OIDC_BROWSER_HANDOFF=page`, and the default.
        case redirectPage = "page"
        /// The URL itself, readable by other local users on the browser's command line while it
        /// runs (a loopback login then relies on ``LoopbackRedirectListener``'s abort of a raced
        /// login). For browsers that cannot open a local file. `OIDC_BROWSER_HANDOFF=url`.
        case url
    }

    /// The explicit command, tried alone when set.
    let command: String?
    /// The environment that `$BROWSER`, `$PATH`, the display, WSL, `OIDC_BROWSER_HANDOFF` and the page's
    /// directory (`$XDG_RUNTIME_DIR`, `$TMPDIR`) are read from, and that the browser gets.
    let environment: [String: String]
    /// How an http(s) URL reaches the browser command: ``Handoff/redirectPage`` unless told otherwise.
    /// Other URLs are always given as they are.
    public var handoff: Handoff
    /// The pages written and not yet removed.
    private let pages = RedirectPages()

    /// A launcher for `command` (when given) or the user's browser as `environment` names it, handing
    /// URLs over as `handoff` says, else as `OIDC_BROWSER_HANDOFF` in `environment` says (`page` or
    /// `url`; anything else is `page`). Nothing is looked up, written or started until ``open(_:)``.
    public init(command: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment, handoff: Handoff? = nil) {
        self.command = command
        self.environment = environment
        self.handoff = handoff ?? environment["OIDC_BROWSER_HANDOFF"].flatMap { Handoff(rawValue: $0.lowercased()) } ?? .redirectPage
    }

    /// The commands that would be tried, in order: each is an argument vector whose words still hold
    /// the `%s` placeholder (appended as the last word when the command had none; `%%` escapes still
    /// unreplaced). The first word is the program, not yet looked up on `$PATH`.
    public var candidates: [[String]] {
        if let command {
            return BrowserCommand.template(command).map { [$0] } ?? []
        }
        if let browser = environment["BROWSER"] {
            let templates = BrowserCommand.templates(browserVariable: browser)
            if !templates.isEmpty { return templates }
        }
        #if os(macOS)
        return [["open", BrowserCommand.placeholder]]
        #else
        let opener = [["xdg-open", BrowserCommand.placeholder]]
        return isWSL ? [["wslview", BrowserCommand.placeholder]] + opener : opener
        #endif
    }

    /// Whether there is a browser to try: an explicit command, `$BROWSER`, `open` on macOS, `wslview`
    /// on `$PATH` under WSL, or `xdg-open` on `$PATH` with a display (`$DISPLAY` or `$WAYLAND_DISPLAY`).
    /// When `false`, print the URL and ask the user to open it (an SSH session, a container).
    public var isAvailable: Bool {
        if let command { return BrowserCommand.template(command) != nil }
        if let browser = environment["BROWSER"], !BrowserCommand.templates(browserVariable: browser).isEmpty { return true }
        #if os(macOS)
        return true
        #else
        let path = environment["PATH"]
        if isWSL, BrowserCommand.resolve("wslview", path: path) != nil { return true }
        let hasDisplay = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        return hasDisplay && BrowserCommand.resolve("xdg-open", path: path) != nil
        #endif
    }

    /// Starts the first candidate that runs: one not found, not startable, or exiting non-zero
    /// within 2 seconds makes way for the next. An http(s) URL is handed over as ``handoff`` says:
    /// by default the command gets a private page's `file://` URL, kept until ``loginEnded(_:)``.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when no candidate could be started, naming each
    ///   program and why (never the URL), or when the private page cannot be written (no parent
    ///   directory is private enough: the message says to set `XDG_RUNTIME_DIR` or `TMPDIR` to a
    ///   private directory, or `OIDC_BROWSER_HANDOFF=url`);
    ///   ``OIDCError/Code/cancelled`` when the task is cancelled. The page is removed on every failure.
    public func open(_ url: URL) async throws(OIDCError) {
        let isWeb = ["http", "https"].contains(url.scheme?.lowercased() ?? "")
        let page = handoff == .redirectPage && isWeb ? try RedirectPage.write(redirectingTo: url, environment: environment) : nil
        let argument = page?.url.absoluteString ?? url.absoluteString
        var failures: [String] = []
        for candidate in candidates {
            guard let program = candidate.first else { continue }
            let shown = UntrustedText.sanitized(program, limit: 80)
            guard let executable = BrowserCommand.resolve(program, path: environment["PATH"]) else {
                failures.append("\(shown): not found")
                continue
            }
            let arguments = candidate.dropFirst().map { BrowserCommand.substitute($0, url: argument) }
            if let failure = await Self.launch(executable, arguments: arguments, environment: environment) {
                failures.append("\(shown): \(failure)")
            } else {
                if let page { await pages.keep(page, for: url) }
                return
            }
            if Task.isCancelled {
                page?.remove()
                throw OIDCError(.cancelled, "Opening the browser was cancelled.")
            }
        }
        page?.remove()
        let tried = failures.isEmpty ? "no browser command" : failures.joined(separator: "; ")
        throw OIDCError(.invalidArgument, "No browser could be opened (tried: \(tried)); open the URL yourself.")
    }

    /// Removes the private page that ``open(_:)`` wrote for `url`, if any: the browser has read it
    /// by the time a login ends. Pages not removed this way are removed once every copy of this value
    /// is gone.
    public func loginEnded(_ url: URL) async {
        await pages.remove(for: url)
    }

    /// How long a started browser is watched for a failing exit.
    static let failureWindow = Duration.seconds(2)

    /// Starts the program; `nil` when it runs on or exits 0 within ``failureWindow``, else why it failed.
    private static func launch(_ executable: String, arguments: [String], environment: [String: String]) async -> String? {
        switch await BrowserProcess.launch(executable, arguments: arguments, environment: environment, window: failureWindow) {
        case .notStarted(let reason): return "could not be started (\(reason))"
        case .running, .exited(0): return nil
        case .exited(let status): return "exited with status \(status)"
        case .signalled(let signal): return "ended by signal \(signal)"
        }
    }

    /// Windows Subsystem for Linux: `$WSL_DISTRO_NAME`, or a kernel release naming Microsoft.
    private var isWSL: Bool {
        if let name = environment["WSL_DISTRO_NAME"], !name.isEmpty { return true }
        guard let release = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) else { return false }
        return release.lowercased().contains("microsoft")
    }
}
