/// What a resource's `WWW-Authenticate` says to a client that has no (or not enough of a) token:
/// the `resource_metadata` URL (RFC 9728 §5.1), the `scope` to ask for and the `error` (RFC 6750
/// §3), read from the `Bearer` or `DPoP` challenge wherever it sits among the answer's fields and
/// challenges (one with `Negotiate` first is read too), with `AuthenticationChallenge`'s bounds.
public struct ResourceChallenge: Sendable, Equatable {
    /// `resource_metadata`, as sent (not yet checked).
    public var resourceMetadata: String?
    /// `scope`, split on spaces; `nil` when absent or empty.
    public var scopes: [String]?
    /// `error`, such as `invalid_token` or `insufficient_scope`.
    public var error: String?
    /// `error_description` of the challenge that carries `error`, as sent: the resource's own
    /// words, for a person (RFC 6750 §3); show it through `UntrustedText` only.
    public var errorDescription: String?

    /// A challenge from its parts.
    package init(resourceMetadata: String? = nil, scopes: [String]? = nil, error: String? = nil, errorDescription: String? = nil) {
        self.resourceMetadata = resourceMetadata
        self.scopes = scopes
        self.error = error
        self.errorDescription = errorDescription
    }

    /// The challenge of `response`, when one of its `WWW-Authenticate` fields has a `Bearer` or
    /// `DPoP` challenge. A resource sends one per scheme it takes, in any order (RFC 9449 §7.1),
    /// and only one carries the error: `error` and `scope` are the first challenge's that has an
    /// `error` (else the first with a `scope`), `resourceMetadata` the first that names one.
    public init?(_ response: HTTPResponse) {
        var found: [AuthenticationChallenge] = []
        for field in response.headers.values("WWW-Authenticate").prefix(16) {
            for challenge in AuthenticationChallenge.parse(field)
            where ["bearer", "dpop"].contains(challenge.scheme.lowercased()) {
                found.append(challenge)
            }
        }
        guard !found.isEmpty else { return nil }
        resourceMetadata = found.lazy.compactMap { $0.parameters["resource_metadata"] }.first
        let failing = found.first { $0.parameters["error"] != nil } ?? found.first { $0.parameters["scope"] != nil }
        let scopes = (failing?.parameters["scope"] ?? "").split(separator: " ").map(String.init)
        self.scopes = scopes.isEmpty ? nil : scopes
        error = failing?.parameters["error"]
        errorDescription = failing?.parameters["error_description"]
    }
}
