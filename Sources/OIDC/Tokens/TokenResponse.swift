package import Foundation

extension TokenSet {
    /// Reads a successful token response (RFC 6749 §5.1) received at `receivedAt`.
    ///
    /// `expires_in` becomes an absolute ``expiresAt``; a missing `scope` means the requested one
    /// (§5.1: "OPTIONAL, if identical to the scope requested").
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` when the body is not a JSON object with a
    ///   string `access_token` and `token_type`, when `token_type` is neither `Bearer` nor `DPoP`
    ///   (RFC 9449), when a member has the wrong type, or when `access_token`, `refresh_token` or
    ///   `id_token` holds a character outside RFC 6749's VSCHAR (Appendix A.12, A.17: printable
    ///   ASCII, 0x20–0x7E). Such a token could not be sent in a header anyway, and printed it could
    ///   drive the terminal (escape sequences); the error names the member and the character's
    ///   code, never the token.
    package init(tokenAnswer body: [UInt8], requestedScopes: [String], receivedAt: Date) throws(OIDCError) {
        try self.init(tokenResponse: body, requestedScopes: requestedScopes, receivedAt: receivedAt, acceptedTypes: ["Bearer", "DPoP"])
    }

    /// Reads a successful token response whose `token_type` is one of `acceptedTypes` (compared
    /// case-insensitively, kept in the spelling given there): `N_A` for a token exchange's answer
    /// that is not an access token (RFC 8693 §2.2.1).
    package init(tokenResponse body: [UInt8], requestedScopes: [String], receivedAt: Date, acceptedTypes: [String]) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(body) } catch {
            throw OIDCError(.malformedResponse, "The token response is not a valid JSON object (\(error)); the provider's answer is broken or truncated.")
        }
        let members = JSONObjectReader(object, document: "The token response")
        /// A token member: `1*VSCHAR` (RFC 6749 Appendix A.12, A.17), else refused without its value.
        func token(_ name: String) throws(OIDCError) -> String? {
            guard let text = try members.string(name) else { return nil }
            if let bad = text.unicodeScalars.first(where: { $0.value < 0x20 || $0.value > 0x7E }) {
                throw OIDCError(
                    .malformedResponse,
                    "The token response's \(name) holds a character outside RFC 6749's VSCHAR (U+\(String(format: "%04X", bad.value)); only printable ASCII is allowed, Appendix A): the provider's answer is refused.",
                    context: ["parameter": name]
                )
            }
            return text
        }
        guard let access = try token("access_token"), !access.isEmpty else {
            throw OIDCError(.malformedResponse, "The token response has no access_token.")
        }
        guard let type = try members.string("token_type") else {
            throw OIDCError(.malformedResponse, "The token response has no token_type.")
        }
        guard let accepted = acceptedTypes.first(where: { type.caseInsensitiveCompare($0) == .orderedSame }) else {
            throw OIDCError(
                .malformedResponse,
                "The token type '\(UntrustedText.sanitized(type, limit: 32))' is not supported here; only \(acceptedTypes.joined(separator: " or ")) tokens are.",
                context: ["token_type": UntrustedText.sanitized(type, limit: 32)]
            ).refusing(tokenType: UntrustedText.sanitized(type, limit: 32))
        }
        let expiresAt = try members.seconds("expires_in").map(receivedAt.addingTimeInterval)
        let scope = try members.string("scope")
        var details: AuthorizationDetails?
        if let value = object["authorization_details"], value != .null {
            guard let elements = value.arrayValue, let read = try? AuthorizationDetails(elements) else {
                throw OIDCError(
                    .malformedResponse, "The token response's authorization_details is not an array of objects each with a type (RFC 9396 §7).",
                    context: ["parameter": "authorization_details"])
            }
            details = read
        }
        self.init(
            accessToken: Secret(access), tokenType: accepted, refreshToken: try token("refresh_token").flatMap { $0.isEmpty ? nil : Secret($0) },
            idToken: try token("id_token").flatMap { $0.isEmpty ? nil : Secret($0) }, expiresAt: expiresAt,
            scopes: scope.map { $0.split(separator: " ").map(String.init) } ?? requestedScopes, receivedAt: receivedAt,
            authorizationDetails: details
        )
    }
}
