import Foundation
import OIDC

/// The command that logs a profile in again, with the flags its saved settings lack (a login made
/// by `oidc inject` has no profile to log in again from), and the sentence every command says
/// when an error of its ended the login (F6).
enum LoginAgain {
    /// `oidc login --profile NAME`, plus `--store DIR` when this command's `--store` is not the
    /// profile's, and `--issuer`/`--client-id` (or `--resource`) from `login` when `profile` cannot
    /// log in again by itself. The default profile needs no `--profile`.
    static func command(profile name: String, saved profile: Profile?, login: StoredLogin?, store: String? = nil) -> String {
        var words = ["oidc", "login"]
        if name != "default" { words += ["--profile", word(name)] }
        if let store, store != profile?.store { words += ["--store", word(store)] }
        let knowsProvider = profile.map { $0.issuer != nil || $0.resource != nil || $0.provider != .generic } ?? false
        let knowsClient = profile.map { $0.clientID != nil || $0.resource != nil } ?? false
        if !knowsProvider || !knowsClient {
            if let login {
                if let resource = login.resource, profile?.resource == nil, login.subject == nil {
                    words += ["--resource", word(resource)]
                } else {
                    if !knowsProvider { words += ["--issuer", word(login.issuer)] }
                    if !knowsClient { words += ["--client-id", word(login.clientID)] }
                }
            } else {
                if !knowsProvider { words += ["--issuer", "URL"] }
                if !knowsClient { words += ["--client-id", "ID"] }
            }
        }
        return words.joined(separator: " ")
    }

    /// `text` sanitized for a terminal, and single-quoted for a shell when it holds anything but
    /// the characters of URLs and names.
    static func word(_ text: String) -> String {
        let clean = UntrustedText.sanitized(text)
        let plain = clean.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || ":/._~%+=@,-".unicodeScalars.contains(scalar))
        }
        if plain, !clean.isEmpty { return clean }
        return "'" + clean.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The profile whose login this command uses and the command that logs it in again, for the
    /// note of an error that ended it. Set by ``ProfileLogin/load(_:logger:)``.
    nonisolated(unsafe) private static var current: (profile: String, command: String)?
    private static let lock = NSLock()

    static func using(profile: String, command: String) { lock.withLock { current = (profile, command) } }

    /// "the login of profile 'P' is over and was removed; log in again with: …" when `error` ended
    /// the login (a refresh refused with `invalid_grant`, bearer tokens for a bound login).
    static func endedNote(for error: OIDCError) -> String? {
        guard error.endedLogin != nil, let current = lock.withLock({ current }) else { return nil }
        return "the login of profile '\(current.profile)' is over and was removed; log in again with: \(current.command)"
    }
}
