public import OIDC
internal import Foundation

extension VerifiedAccess {
    /// The access as a JSON object, for an API that reports it (a `/me` route, `oidc
    /// resource-server`'s answers): `token_type`, `scope` (sorted, space-separated), `aud`, and
    /// when the token has them `sub`, `client_id`, `iss`, `exp` (seconds since 1970), `cnf` (`jkt`,
    /// `x5t#S256`) and `authorization_details` (RFC 9396). Never the token itself.
    /// `JSONValue.jsonText` writes it with sorted members.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "token_type": .string(tokenType),
            "scope": .string(scopes.sorted().joined(separator: " ")),
            "aud": .array(audience.map(JSONValue.string)),
        ]
        if let subject { object["sub"] = .string(subject) }
        if let clientID { object["client_id"] = .string(clientID) }
        if let issuer { object["iss"] = .string(issuer) }
        if let expiresAt { object["exp"] = .number(expiresAt.timeIntervalSince1970.rounded(.down)) }
        var confirmation: [String: JSONValue] = [:]
        if let key = binding.keyThumbprint { confirmation["jkt"] = .string(key) }
        if let certificate = binding.certificateThumbprint { confirmation["x5t#S256"] = .string(certificate) }
        if !confirmation.isEmpty { object["cnf"] = .object(confirmation) }
        if !authorizationDetails.isEmpty { object["authorization_details"] = .array(authorizationDetails) }
        return .object(object)
    }
}
