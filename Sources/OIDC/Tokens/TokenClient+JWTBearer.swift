internal import Foundation

extension GrantType {
    /// `urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1): a JWT that another party
    /// issued (a workload identity, an identity assertion) traded for tokens.
    public static let jwtBearer = GrantType(rawValue: "urn:ietf:params:oauth:grant-type:jwt-bearer")
}

/// The JWT bearer authorization grant (RFC 7523 §2.1).
extension TokenClient {
    /// The most characters an assertion may have: far more than any JWT a workload identity or an
    /// identity provider issues, and a bound on what a mistaken file makes the library send.
    static let assertionLimit = 64 * 1024

    /// Tokens for a JWT the client holds (RFC 7523 §2.1): one token request with
    /// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and the JWT as `assertion`, with
    /// the client's authentication when it has one (the grant does not need it, §3.1). What the
    /// assertion says (its issuer, subject, audience and expiry) is for the authorization server to
    /// check; this client sends it as it is, trimmed, and never logs it. A refused assertion
    /// (`invalid_grant`) is not tried again.
    ///
    /// - Parameters:
    ///   - assertion: the JWT, a compact JWS or JWE (a Kubernetes service account token, a cloud
    ///     workload identity token, an identity assertion from a token exchange).
    ///   - scopes: the scope values asked for; none sends no `scope`.
    ///   - parameters: more parameters, such as `resource` (RFC 8707) or `audience`.
    /// - Throws: ``OIDCError/Code/invalidArgument`` for an assertion that is empty, not in the
    ///   compact form (three or five dot-separated parts) or over 64 KiB, or an `assertion` among
    ///   `parameters`; what ``grant(_:parameters:scopes:)`` throws (a refusal is
    ///   ``OIDCError/Code/providerError`` with the provider's `invalid_grant`).
    public func jwtBearer(assertion: Secret, scopes: [String] = [], parameters: [OAuthParameter] = []) async throws(OIDCError) -> TokenSet {
        let value = try Self.checkedAssertion(assertion)
        guard !parameters.contains(where: { $0.name == "assertion" }) else {
            throw .invalidArgument("Pass the JWT as `assertion`, not among the parameters.")
        }
        return try await grant(GrantType.jwtBearer.rawValue, parameters: [OAuthParameter("assertion", value)] + parameters, scopes: scopes)
    }

    /// `assertion` trimmed, once it has the shape of a compact JWS or JWE.
    static func checkedAssertion(_ assertion: Secret) throws(OIDCError) -> String {
        let value = assertion.revealedValue.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw .invalidArgument("The assertion is empty: give the JWT the grant trades for tokens.") }
        guard value.utf8.count <= assertionLimit else {
            throw .invalidArgument("The assertion is over \(assertionLimit / 1024) KiB: no JWT is that long; check that it is the right file.")
        }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        let base64URL = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard parts.count == 3 || parts.count == 5, !parts[0].isEmpty, parts.allSatisfy({ $0.allSatisfy(base64URL.contains) }) else {
            throw .invalidArgument("The assertion is not a JWT in the compact form (three or five base64url parts separated by dots).")
        }
        return value
    }
}
