import Foundation
import OIDC

/// An API's 403 `insufficient_scope` (RFC 6750 §3.1) to `oidc request`: the token lacks a scope the
/// request needs. oidc neither refreshes nor retries (a refresh cannot widen a grant, and a loop
/// would only repeat the refusal); it exits 4 naming the scopes the API asked for and the exact
/// command that gets them: `oidc login --profile P --scope '…'`, the union of the scopes the
/// profile asks for, those the login was granted and those the API named, so that the new login
/// keeps what worked before (the MCP authorization spec's step-up).
struct StepUp {
    let profile: String
    let url: URL
    /// The `scope` of the challenge; `nil` when the API named none.
    let asked: [String]?
    /// What the profile asks for and the login was granted, in that order, without repeats.
    let held: [String]
    /// The challenge's `error_description`, sanitized: said when the API names no scope.
    let reason: String?

    init(profile: String, login: ProfileLogin, url: URL, asked: [String]?, reason: String? = nil) {
        self.profile = profile
        self.url = url
        self.reason = reason.map { UntrustedText.sanitized($0, limit: 200) }
        self.asked = asked.flatMap { $0.isEmpty ? nil : $0 }
        var held: [String] = []
        for scope in (login.boundProfile?.scopes ?? []) + login.login.tokens.scopes where !held.contains(scope) { held.append(scope) }
        self.held = held
    }

    /// The step-up `response` asks for, when it is a 403 whose `Bearer` or `DPoP` challenge says
    /// `insufficient_scope`; `nil` for any other answer.
    init?(_ response: HTTPResponse, profile: String, login: ProfileLogin, url: URL) {
        guard response.status == 403, let challenge = ResourceChallenge(response), challenge.error == "insufficient_scope" else { return nil }
        self.init(profile: profile, login: login, url: url, asked: challenge.scopes, reason: challenge.errorDescription)
    }

    /// The scopes the new login asks for: those held, then those asked for that are new.
    var union: [String] { held + (asked ?? []).filter { !held.contains($0) } }

    /// `--scope` with the union, quoted for a POSIX shell: single quotes, in which nothing expands
    /// (a `$` or a backtick a server put in a scope stays text), a quote written `'\''`.
    var scopeArgument: String {
        "--scope '" + union.joined(separator: " ").replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// The error `oidc request` exits with (4): never the token, the server's text sanitized. The
    /// command ends the line, so that it can be copied as it is (no context is appended to it).
    var error: OIDCError {
        let flag = "oidc login --profile \(profile)"
        let where_ = UntrustedText.sanitized(url.absoluteString, limit: 200)
        guard let asked else {
            if let reason, !reason.isEmpty {
                // Its own words: a missing rich authorization detail (RFC 9396) is refused so too.
                return OIDCError(
                    .insufficientScope,
                    "\(where_) refused the token (403 insufficient_scope: \"\(reason)\") and named no scope; log in again for what it needs (--scope, or --authorization-details)",
                    context: ["profile": profile, "rule": "insufficient_scope"]
                )
            }
            return OIDCError(
                .insufficientScope,
                "\(where_) refused the token for want of scope (403 insufficient_scope, RFC 6750 §3.1) and named none; log in again, adding with --scope the scopes the API documents",
                context: ["profile": profile, "rule": "insufficient_scope"]
            )
        }
        // A scope outside RFC 6749 §3.3's characters cannot be asked for: no command to copy.
        guard (try? AuthorizationRequest.scopeValue(union)) != nil else {
            return OIDCError(
                .insufficientScope,
                "\(where_) refused the token for want of scope (403 insufficient_scope) and named '\(UntrustedText.sanitized(asked.joined(separator: " "), limit: 200))', which holds a character no scope may hold (RFC 6749 §3.3); oidc cannot ask for it.",
                context: ["profile": profile, "rule": "insufficient_scope"]
            )
        }
        let missing = asked.filter { !held.contains($0) }
        let lacking = missing.isEmpty ? "" : " (the login lacks \(missing.joined(separator: " ")))"
        return OIDCError(
            .insufficientScope,
            "\(where_) needs the scope \(asked.joined(separator: " "))\(lacking): 403 insufficient_scope (RFC 6750 §3.1). Log in for it, keeping the scopes you have, with: \(flag) \(scopeArgument)"
        ).requiring(scopes: asked)
    }
}

/// An API's 401 `insufficient_user_authentication` (RFC 9470) to `oidc request`: the login is not
/// strong or recent enough. The session neither refreshes nor retries (refreshed tokens keep the old
/// authentication); `oidc request` exits 4 naming what the API asked for and the login that gets it:
/// `oidc login --profile P --acr-values '…' [--max-age S]`, which sends them and refuses an ID token
/// that does not meet them.
struct AuthenticationStepUp {
    let profile: String
    let url: URL
    let acrValues: [String]?
    let maxAge: Int?

    /// The command line of the login that asks for what the API named: single-quoted for a POSIX
    /// shell (a `$` or a backtick a server put there stays text).
    var command: String {
        var command = "oidc login --profile \(profile)"
        if let acrValues { command += " --acr-values '" + acrValues.joined(separator: " ").replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        if let maxAge { command += " --max-age \(maxAge)" }
        return command
    }

    /// The error `oidc request` exits with (4): never the token; the command ends the line.
    var error: OIDCError {
        let where_ = UntrustedText.sanitized(url.absoluteString, limit: 200)
        let asked = [acrValues.map { "acr_values '\($0.joined(separator: " "))'" }, maxAge.map { "max_age \($0) s" }].compactMap { $0 }
        guard !asked.isEmpty else {
            return OIDCError(
                .insufficientUserAuthentication,
                "\(where_) needs a stronger or more recent login (401 insufficient_user_authentication, RFC 9470) and named no acr_values or max_age; log in again as the API documents, with: oidc login --profile \(profile)")
        }
        return OIDCError(
            .insufficientUserAuthentication,
            "\(where_) needs a stronger or more recent login: 401 insufficient_user_authentication (RFC 9470) asking for \(asked.joined(separator: " and ")). Log in for it with: \(command)")
    }
}
