public import OIDC

/// Why a request was not let through, and exactly what to answer: ``status`` and ``headers``
/// (`WWW-Authenticate` per RFC 6750 §3 and RFC 9449 §7.1, `DPoP-Nonce` per RFC 9449 §8).
///
/// ```swift
/// do {
///     let access = try await server.verify(request, requiring: ["orders:read"])
///     …
/// } catch {
///     return Response(status: error.status, headers: error.headers)  // body optional: error.body
/// }
/// ```
///
/// Nothing in a refusal repeats the token, the proof or any other value the client sent: the
/// ``message`` names the rule broken, and is safe to log and to send as `error_description`.
public struct AccessRefusal: Error, Sendable, CustomStringConvertible {
    /// The rule that was broken.
    public let rule: Rule
    /// The OAuth error code: `invalid_request`, `invalid_token`, `insufficient_scope`
    /// (RFC 6750 §3.1), `invalid_dpop_proof` or `use_dpop_nonce` (RFC 9449 §7.1, §8); `nil` when
    /// the request carried no token (RFC 6750 §3.1: the challenge then has no error) or the
    /// server itself failed.
    public let error: String?
    /// What went wrong, in words: also the challenge's `error_description`.
    public let message: String
    /// The status to answer with: 400 (`invalid_request`), 401, 403 (`insufficient_scope`), or
    /// 503 when this server could not check the token (its issuer's keys, the introspection
    /// endpoint or the replay store were unreachable).
    public let status: Int
    /// The headers to answer with, in order: one `WWW-Authenticate` per scheme offered, and
    /// `DPoP-Nonce` when a nonce goes with the refusal.
    public let headers: HTTPHeaders

    /// An RFC 6749 §5.2-style JSON body for the answer: `{"error":…,"error_description":…}`
    /// (`{}` when there is no error code). RFC 6750 asks for none; some clients show it.
    public var body: String {
        guard let error else { return "{}" }
        return #"{"error":\#(JSONString.quoted(error)),"error_description":\#(JSONString.quoted(message))}"#
    }

    /// A refusal with these parts; the server builds them (``ResourceServer/verify(_:requiring:authentication:)``),
    /// and so can a framework adapter that refuses before the kit is asked.
    public init(rule: Rule, error: String?, message: String, status: Int, headers: HTTPHeaders) {
        self.rule = rule
        self.error = error
        self.message = message
        self.status = status
        self.headers = headers
    }

    /// The rule, status, error code and message: safe to log (never the token or the proof).
    public var description: String {
        "AccessRefusal(\(rule.name), \(status)\(error.map { " \($0)" } ?? "")): \(message)"
    }
}
