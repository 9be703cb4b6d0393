import ArgumentParser
import OIDC

/// `--scope` values as users write them. RFC 6749 §3.3 makes the scope a list of space-delimited
/// tokens, so `--scope "openid profile"` is two scopes, as `--scope openid --scope profile` is. Each
/// value is split on spaces only (a comma is a legal scope character: `a,b` is one token), each token
/// must be `1*NQCHAR` (`%x21 / %x23-5B / %x5D-7E`), and a repeated token is dropped, the first kept
/// in its place.
enum ScopeTokens {
    /// The scope tokens of the `--scope` values, in order and without repeats.
    ///
    /// - Throws: `ValidationError` (exit 2) naming `flag` when a value holds no token, or a token
    ///   holds a character outside RFC 6749 §3.3 (a quote, a backslash, a tab, non-ASCII).
    static func parse(_ values: [String], flag: String = "--scope") throws -> [String] {
        var tokens: [String] = []
        for value in values {
            let split = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard !split.isEmpty else {
                throw ValidationError("\(flag) '\(value)' holds no scope: give scope tokens separated by spaces (RFC 6749 §3.3)")
            }
            tokens += split
        }
        let joined: String
        do { joined = try AuthorizationRequest.scopeValue(tokens) } catch { throw ValidationError("\(flag): \(error.message)") }
        return joined.isEmpty ? [] : joined.split(separator: " ").map(String.init)
    }
}
