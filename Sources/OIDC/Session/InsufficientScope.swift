internal import Foundation

/// Step-up (RFC 6750 §3.1, the MCP authorization spec's scope challenge): a resource's 403 whose
/// `Bearer` (or `DPoP`) challenge says `error="insufficient_scope"` is not healed by a refresh (the
/// refreshed token has the same scopes) nor by a retry: the session stops there with a typed
/// error naming the scopes the resource asked for, and the caller logs in again for more.
enum InsufficientScope {
    /// The error for `response` from `url`, when it is such a 403; `nil` otherwise.
    static func error(_ response: HTTPResponse, from url: URL) -> OIDCError? {
        guard response.status == 403, let challenge = ResourceChallenge(response), challenge.error == "insufficient_scope" else { return nil }
        let scopes = challenge.scopes.map { $0.map { UntrustedText.sanitized($0, limit: 128) } }
        var context = ["status": "403", "rule": "RFC 6750 §3.1 insufficient_scope", "url": HTTPErrorMapping.describe(url)]
        context["scope"] = scopes?.joined(separator: " ")
        // Its own words, for a refusal that names no scope (a missing rich authorization detail, RFC 9396).
        context["error_description"] = challenge.errorDescription.map { UntrustedText.sanitized($0, limit: 200) }
        let named = scopes.map { "it asks for '\($0.joined(separator: " "))'" } ?? "it names no scope"
        return OIDCError(
            .insufficientScope,
            "The resource at \(HTTPErrorMapping.describe(url)) needs more scope than the login has (403 insufficient_scope; \(named)); log in again for the login's scopes and these.",
            context: context
        ).requiring(scopes: scopes)
    }
}

extension StoredLogin {
    /// The scopes of a step-up login after `error` (``OIDCError/Code/insufficientScope``): the
    /// login's granted scopes, then those the resource asked for that it lacks, in order and once
    /// each. Without required scopes in the error, the login's own.
    ///
    /// ```swift
    /// catch let error where error.code == .insufficientScope {
    ///     let more = try await rp.loopbackLogin(scopes: login.scopes(steppingUpFor: error)).runLogin()
    /// }
    /// ```
    public func scopes(steppingUpFor error: OIDCError) -> [String] {
        var union: [String] = []
        for scope in tokens.scopes + (error.requiredScopes ?? []) where !union.contains(scope) { union.append(scope) }
        return union
    }
}
