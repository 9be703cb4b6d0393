internal import Foundation
internal import OIDC

/// What a verified token says, whether a JWT verified here or an introspection answer: the
/// members ``VerifiedAccess`` shows and the binding (`cnf`) the request must then prove.
struct TokenFacts: Sendable {
    enum Claims: Sendable {
        case members(JSONMembers)
        case object([String: JSONValue])
    }

    var subject: String?
    var clientID: String?
    var scopes: Set<String>
    var issuer: String?
    var audience: [String]
    var expiresAt: Date?
    var issuedAt: Date?
    var tokenID: String?
    /// `cnf.jkt`: the token is DPoP-bound to this key.
    var keyThumbprint: String?
    /// `cnf["x5t#S256"]`: the token is bound to this client certificate.
    var certificateThumbprint: String?
    var source: VerifiedAccess.Source
    var claims: Claims

    var allClaims: [String: JSONValue] {
        switch claims {
        case .members(let members): members.dictionary
        case .object(let object): object
        }
    }

    /// `authorization_details` (RFC 9396 §9.1 in a JWT, §9.2 in an introspection answer): absent,
    /// or an array of objects each with a non-empty string `type` (§2); empty when absent.
    func authorizationDetails() throws(Denial) -> [JSONValue] {
        guard let value = allClaims["authorization_details"] else { return [] }
        guard case .array(let details) = value, details.allSatisfy({ detail in
            guard case .object(let members) = detail, case .string(let type)? = members["type"] else { return false }
            return !type.isEmpty
        }) else {
            throw .invalidToken(.invalidClaim, "The access token's authorization_details must be an array of objects, each with a string type (RFC 9396 §2).")
        }
        return details
    }

    /// A token's `cnf` (RFC 7800 §3.1), read.
    enum Confirmation {
        /// No binding, or one this resource checks: `jkt` (RFC 9449 §6), `x5t#S256` (RFC 8705 §3.1).
        case checked(jkt: String?, x5t: String?)
        /// `cnf` is not a JSON object (RFC 7800 §3.1), or its `jkt` or `x5t#S256` is not a
        /// non-empty string.
        case malformed
        /// A binding this resource cannot check: a member other than those two. Never taken as a
        /// bearer token.
        case unsupported(String)
    }

    /// The members of `cnf` this resource checks; any other is a proof-of-possession method it
    /// does not implement (RFC 7800 §3.2–3.5 `jwk`, `jwe`, `kid`, `jku`; the SHA-1 `x5t`; …).
    static let checkedConfirmationMembers: Set<String> = ["jkt", "x5t#S256"]

    /// `cnf` (RFC 7800 §3.1): absent, or an object whose members are `jkt` and `x5t#S256` only,
    /// each a non-empty string.
    static func confirmation(_ value: JSONValue?) -> Confirmation {
        guard let value else { return .checked(jkt: nil, x5t: nil) }
        guard case .object(let members) = value else { return .malformed }
        let others = members.keys.filter { !checkedConfirmationMembers.contains($0) }.sorted()
        guard others.isEmpty else {
            let names = others.prefix(4).map { UntrustedText.sanitized($0, limit: 24) }.joined(separator: ", ")
            return .unsupported(
                "it is bound (cnf: \(names)\(others.count > 4 ? ", ..." : "")) by a method this resource cannot check (it checks jkt and x5t#S256 only)")
        }
        var jkt: String?, x5t: String?
        if let member = members["jkt"] {
            guard case .string(let text) = member, !text.isEmpty else { return .malformed }
            jkt = text
        }
        if let member = members["x5t#S256"] {
            guard case .string(let text) = member, !text.isEmpty else { return .malformed }
            x5t = text
        }
        return .checked(jkt: jkt, x5t: x5t)
    }

    /// `scope` as a space-separated string (RFC 9068 §2.2.3), or, from providers that use it,
    /// `scp` as a string or an array of strings.
    static func scopes(scope: JSONValue?, scp: JSONValue?) -> Set<String>? {
        switch scope ?? scp {
        case nil: return []
        case .string(let text)?: return Set(text.split(separator: " ").map(String.init))
        case .array(let list)? where scope == nil:
            var result = Set<String>()
            for element in list {
                guard case .string(let text) = element else { return nil }
                result.insert(text)
            }
            return result
        default: return nil
        }
    }
}
