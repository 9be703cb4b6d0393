public import Foundation

extension TokenSet {
    /// Reads a successful token response (RFC 6749 §5.1) received at `receivedAt`.
    ///
    /// `expires_in` becomes an absolute ``expiresAt``; a missing `scope` means the requested one
    /// (§5.1: "OPTIONAL, if identical to the scope requested").
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` when the body is not a JSON object with a
    ///   string `access_token` and `token_type`, when `token_type` is neither `Bearer` nor `DPoP`
    ///   (RFC 9449), or when a member has the wrong type.
    public init(tokenResponse body: [UInt8], requestedScopes: [String], receivedAt: Date) throws(OIDCError) {
        try self.init(tokenResponse: body, requestedScopes: requestedScopes, receivedAt: receivedAt, acceptedTypes: ["Bearer", "DPoP"])
    }

    /// Reads a successful token response whose `token_type` is one of `acceptedTypes` (compared
    /// case-insensitively, kept in the spelling given there): `N_A` for a token exchange's answer
    /// that is not an access token (RFC 8693 §2.2.1).
    package init(tokenResponse body: [UInt8], requestedScopes: [String], receivedAt: Date, acceptedTypes: [String]) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSON.parseObject(body) } catch {
            throw OIDCError(.malformedResponse, "The token response is not a valid JSON object (\(error)); the provider's answer is broken or truncated.")
        }
        func string(_ name: String) throws(OIDCError) -> String? {
            switch object[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw OIDCError(.malformedResponse, "The token response's '\(name)' must be a string.")
            }
        }
        guard let access = try string("access_token"), !access.isEmpty else {
            throw OIDCError(.malformedResponse, "The token response has no access_token.")
        }
        guard let type = try string("token_type") else {
            throw OIDCError(.malformedResponse, "The token response has no token_type.")
        }
        guard let accepted = acceptedTypes.first(where: { type.caseInsensitiveCompare($0) == .orderedSame }) else {
            throw OIDCError(
                .malformedResponse,
                "The token type '\(UntrustedText.sanitized(type, limit: 32))' is not supported here; only \(acceptedTypes.joined(separator: " or ")) tokens are.",
                context: ["token_type": UntrustedText.sanitized(type, limit: 32)]
            )
        }
        var expiresAt: Date?
        switch object["expires_in"] {
        case nil, .null?:
            break
        case .number(let seconds)? where seconds >= 0 && seconds < 1e10:
            expiresAt = receivedAt.addingTimeInterval(seconds)
        case .string(let text)? where Double(text).map({ $0 >= 0 && $0 < 1e10 }) == true:
            expiresAt = receivedAt.addingTimeInterval(Double(text)!)  // some providers send a string
        default:
            throw OIDCError(.malformedResponse, "The token response's expires_in must be a number of seconds.")
        }
        let scope = try string("scope")
        self.init(
            accessToken: Secret(access), tokenType: accepted, refreshToken: try string("refresh_token").flatMap { $0.isEmpty ? nil : Secret($0) },
            idToken: try string("id_token").flatMap { $0.isEmpty ? nil : Secret($0) }, expiresAt: expiresAt,
            scopes: scope.map { $0.split(separator: " ").map(String.init) } ?? requestedScopes, receivedAt: receivedAt
        )
    }
}
