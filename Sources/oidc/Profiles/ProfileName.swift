import ArgumentParser
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a profile name may be, wherever one is taken (`--profile`, `OIDC_PROFILE`), and how a
/// stored one is shown (user trial 5, F17). A name is printed by `login`, `status` and `logout`,
/// and listed by `status --all` and `logout --all`: a control character in it (ESC, a line break,
/// DEL, a C1 control), a format character (a bidi override, a zero-width character) or a line
/// separator would reach the terminal as itself, so such a name is refused. Anything else is a
/// name: spaces, slashes, non-ASCII letters, a leading dash (the file name is percent-encoded).
enum ProfileName {
    /// The longest name, in UTF-8 bytes.
    static let maximumBytes = 100

    /// Why `name`, given as `source` (`--profile`, `OIDC_PROFILE`), is no profile name; `nil` when it is one.
    static func refusal(_ name: String, from source: String) -> String? {
        if name.isEmpty { return "\(source) must not be empty" }
        if name.utf8.count > maximumBytes { return "\(source) must be at most \(maximumBytes) bytes" }
        guard let bad = name.unicodeScalars.first(where: UntrustedText.isUnsafe) else { return nil }
        let code = "U+" + String(bad.value, radix: 16, uppercase: true).leftPadded(to: 4)
        return "\(source) holds a control or format character (\(code)), which would reach the terminal as it is when the name is printed: give a name without one ('\(shown(name))' shows where)"
    }

    /// Refuses `name` as ``refusal(_:from:)`` says, as a usage error (exit 2).
    static func validate(_ name: String, from source: String) throws {
        if let reason = refusal(name, from: source) { throw ValidationError(reason) }
    }

    /// Why `OIDC_PROFILE` is no profile name, when it is set, not empty, and refused.
    static func environmentRefusal() -> String? {
        guard let value = getenv("OIDC_PROFILE"), value.pointee != 0 else { return nil }
        return refusal(String(cString: value), from: "OIDC_PROFILE")
    }

    /// A stored name as it may be printed: each control or format character as `?` (a profile
    /// file or login left by an older version that took any name).
    static func shown(_ name: String) -> String { UntrustedText.sanitized(name, limit: maximumBytes) }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
