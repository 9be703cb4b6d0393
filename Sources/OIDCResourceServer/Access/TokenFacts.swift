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

    /// `cnf` (RFC 7800 §3.1): an object whose `jkt` and `x5t#S256`, when present, are strings.
    static func confirmation(_ value: JSONValue?) -> (jkt: String?, x5t: String?)? {
        guard let value else { return (nil, nil) }
        guard case .object(let members) = value else { return nil }
        var jkt: String?, x5t: String?
        if let member = members["jkt"] {
            guard case .string(let text) = member, !text.isEmpty else { return nil }
            jkt = text
        }
        if let member = members["x5t#S256"] {
            guard case .string(let text) = member, !text.isEmpty else { return nil }
            x5t = text
        }
        return (jkt, x5t)
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
