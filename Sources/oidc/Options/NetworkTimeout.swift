import ArgumentParser
import Foundation
import OIDC

/// How long one request to a server may take: a command's `--timeout`, else `OIDC_HTTP_TIMEOUT`
/// (whole seconds, 1 to 600), else the command's default (`oidc token` 10 s: kubectl and scripts
/// wait on it; `oidc request` 30 s; discovery during a login 15 s, never longer than the login's
/// own `--timeout`). A server that does not answer in time ends the command with exit 5, in words
/// that name the value and how to change it.
enum NetworkTimeout {
    static let variable = "OIDC_HTTP_TIMEOUT"
    static let range = 1...600

    /// `OIDC_HTTP_TIMEOUT`'s seconds, `nil` when unset or empty.
    ///
    /// - Throws: `ValidationError` (exit 2) for anything but whole seconds in range.
    static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int? {
        guard let text = environment[variable], !text.isEmpty else { return nil }
        guard let seconds = Int(text), range.contains(seconds) else {
            throw ValidationError("\(variable) must be whole seconds, 1 to 600, not '\(UntrustedText.sanitized(text, limit: 32))'")
        }
        return seconds
    }

    /// The seconds of `flag`, else of the environment, else `fallback`.
    static func seconds(flag: Int?, default fallback: Int) throws -> Int {
        if let flag {
            guard range.contains(flag) else { throw ValidationError("--timeout must be 1 to 600 seconds") }
            return flag
        }
        return try environment() ?? fallback
    }

    /// One request's bound during `oidc login`: `OIDC_HTTP_TIMEOUT`, else 15 s, and never longer
    /// than the login's own `--timeout` (which bounds the whole sign-in, discovery included).
    static func login(loginTimeout: Int?) throws -> Duration {
        let seconds = try environment() ?? loginDefault
        return .seconds(min(seconds, loginTimeout ?? seconds))
    }

    /// Discovery and the token endpoint during a login, without `OIDC_HTTP_TIMEOUT`.
    static let loginDefault = 15

    /// The commands whose requests `OIDC_HTTP_TIMEOUT` bounds, and those of them with a `--timeout`
    /// of their own for one request's wait.
    static let honouring: Set = ["token", "refresh", "request", "discover", "login", "logout", "exchange", "introspect", "authorize-url"]
    static let flagged: Set = ["token", "refresh", "request", "discover"]

    /// The line after a server that did not answer in time: how to give it longer, for `command`
    /// (its name); `loginTimeout`, `oidc login`'s `--timeout`, when that was the bound that ran out.
    static func advice(for error: OIDCError, command: String, loginTimeout: Int? = nil) -> String? {
        guard error.code == .timedOut, error.context["host"] != nil, honouring.contains(command) else { return nil }
        if command == "login", let loginTimeout, loginTimeout <= ((try? environment()) ?? loginDefault) {
            return "oidc: to wait longer for the server, give a longer --timeout: it bounds the whole login, its requests too"
        }
        let flag = flagged.contains(command) ? "--timeout SECONDS or " : ""
        return "oidc: to wait longer for the server, give \(flag)\(variable)=SECONDS (1 to 600)"
    }
}
