internal import OIDC

/// The one line an API logs for each decision, the same in `oidc resource-server`, the
/// Hummingbird and the Vapor middleware:
///
/// - `accepted GET /me: DPoP token of client my-cli for subject alice`
/// - `refused GET /me: 401 invalid_token (token_expired): The access token has expired.`
///
/// Never the token, the proof or a header's value: the method and path are the request's (control
/// characters replaced, cut at 16 and 120 characters), the rest is what the kit decided.
public enum AccessLog {
    /// The line for a request let through with `access`.
    public static func accepted(_ access: VerifiedAccess, method: String, path: String) -> String {
        "accepted \(request(method, path)): \(access.tokenType) token"
            + (access.clientID.map { " of client \(UntrustedText.sanitized($0))" } ?? "")
            + (access.subject.map { " for subject \(UntrustedText.sanitized($0))" } ?? "")
    }

    /// The line for a request refused with `refusal`: its status, error code, rule and message.
    public static func refused(_ refusal: AccessRefusal, method: String, path: String) -> String {
        "refused \(request(method, path)): \(refusal.status)\(refusal.error.map { " \($0)" } ?? "") (\(refusal.rule.name)): "
            + UntrustedText.sanitized(refusal.message, limit: 300)
    }

    private static func request(_ method: String, _ path: String) -> String {
        "\(UntrustedText.sanitized(method, limit: 16)) \(UntrustedText.sanitized(path, limit: 120))"
    }
}
