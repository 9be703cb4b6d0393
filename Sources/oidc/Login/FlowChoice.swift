import ArgumentParser
import Foundation

/// How `oidc login` signs in: `--flow`, remembered by the profile.
enum LoginFlowKind: String, ExpressibleByArgument, CaseIterable {
    /// The browser when one is usable here, else the device flow when the provider has it.
    case auto
    /// A browser on this machine, through a loopback redirect (RFC 8252).
    case browser
    /// A browser anywhere: the user enters a code (RFC 8628).
    case device
    /// No person: the client's own credentials (RFC 6749 §4.4).
    case clientCredentials = "client-credentials"
    /// No person: a JWT the client holds, traded for tokens (RFC 7523 §2.1).
    case jwtBearer = "jwt-bearer"
    /// A person approves on their own device, reached by a login hint (OpenID CIBA Core 1.0).
    case ciba
}

/// `--ciba-mode`: how a CIBA login learns that the user approved.
enum CIBAMode: String, ExpressibleByArgument, CaseIterable {
    /// The token endpoint is asked every interval.
    case poll
    /// The provider notifies the client's endpoint (`--notification-listen`); one token request follows.
    case ping
}

/// Whether a browser can be used on this machine, from the environment alone: what `--flow auto`
/// decides by.
///
/// A browser is usable when one is named (`--browser`, or `$BROWSER`); otherwise not in an SSH
/// session (`SSH_CONNECTION` or `SSH_TTY`: a forwarded display or a desktop opener would open it
/// on the wrong machine, or not at all), and otherwise on Linux only with a display (`DISPLAY` or
/// `WAYLAND_DISPLAY`) or under WSL with `wslview`; macOS always has `open`. With `--no-browser` the
/// user opens the printed URL themselves, wherever they are: `auto` is then the browser flow.
struct BrowserEnvironment {
    let browserNamed: Bool
    /// `--no-browser`: print the loopback URL rather than open it.
    let noBrowser: Bool
    let ssh: Bool
    let display: Bool
    let wslView: Bool

    init(browserCommand: String?, noBrowser: Bool = false, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.noBrowser = noBrowser
        func set(_ name: String) -> Bool { !(environment[name] ?? "").trimmingCharacters(in: .whitespaces).isEmpty }
        browserNamed = browserCommand.map { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? false || set("BROWSER")
        ssh = set("SSH_CONNECTION") || set("SSH_TTY")
        display = set("DISPLAY") || set("WAYLAND_DISPLAY")
        wslView = Self.isWSL && Self.onPath("wslview", environment["PATH"])
    }

    var browserUsable: Bool {
        if browserNamed { return true }
        if ssh { return false }
        #if os(macOS)
        return true
        #else
        return display || wslView
        #endif
    }

    /// Why no browser is usable, for the line that says the device flow was chosen.
    var reason: String {
        ssh ? "an SSH session with no browser named (--browser or $BROWSER)" : "no browser here (no --browser, no $BROWSER, no display)"
    }

    /// The flow `requested` comes to here: `auto` becomes the device flow when the provider has a
    /// device authorization endpoint, no browser is usable and `--no-browser` was not given (it asks
    /// for the URL to open by hand), and the browser flow otherwise.
    func resolve(_ requested: LoginFlowKind, providerHasDeviceEndpoint: Bool) -> LoginFlowKind {
        guard requested == .auto else { return requested }
        return providerHasDeviceEndpoint && !noBrowser && !browserUsable ? .device : .browser
    }

    private static var isWSL: Bool {
        guard let release = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) else { return false }
        return release.lowercased().contains("microsoft")
    }

    private static func onPath(_ name: String, _ path: String?) -> Bool {
        (path ?? "").split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}
