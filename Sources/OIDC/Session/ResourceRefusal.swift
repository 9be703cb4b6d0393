internal import Foundation

/// The error of a resource's 401 that a freshly refreshed token did not cure.
enum ResourceRefusal {
    /// The resource's own reason (its challenge's `error` and `error_description`, short and
    /// sanitised) quoted in the message, and its `resource_metadata` (RFC 9728) in the context,
    /// where a caller finds the resource to log in for. Never a token.
    static func error(_ response: HTTPResponse, from url: URL) -> OIDCError {
        let challenge = ResourceChallenge(response)
        var context = ["status": "401"]
        let reason = RefusalReason.text(of: response).map { ": \($0)" } ?? ""
        if let metadata = challenge?.resourceMetadata { context["resource_metadata"] = UntrustedText.sanitized(metadata, limit: 512) }
        let cause = reason.isEmpty
            ? "the token lacks rights there, or the resource trusts another issuer"
            : "the resource said why"
        return OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(url)) refused a freshly refreshed token (401\(reason)); \(cause).",
            context: context
        )
    }
}
