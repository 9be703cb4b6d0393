public import Foundation

/// The claims of a verified ID token (OIDC Core §2), with the raw JSON kept.
public struct IDTokenClaims: Sendable {
    public let issuer: String
    public let subject: String
    public let audience: [String]
    public let expiresAt: Date
    public let issuedAt: Date
    public let notBefore: Date?
    public let authTime: Date?
    public let nonce: String?
    public let authorizedParty: String?
    public let accessTokenHash: String?
    public let acr: String?
    public let amr: [String]?
    /// Schibsted's `legacy_user_id`, when present (never required).
    public let legacyUserID: String?
    /// Every claim, as parsed.
    public let raw: [String: JSONValue]
    /// The payload exactly as signed (UTF-8 JSON).
    public let rawJSON: String

    /// Reads the registered claims; ``IDTokenVerifier`` checks their values.
    ///
    /// - Throws: ``OIDCError/Code/invalidClaim`` when a claim has the wrong type, a required one is
    ///   missing, or a date is not a finite number.
    package init(payload: [UInt8]) throws(OIDCError) {
        let raw: [String: JSONValue]
        do { raw = try StrictJSON.parseObject(payload, maximumDepth: CompactJWS.maximumDepth) } catch {
            throw CompactJWS.malformed("the claims are not a valid JSON object (\(error))")
        }
        func invalid(_ name: String, _ rule: String) -> OIDCError {
            OIDCError(.invalidClaim, "The ID token's '\(name)' claim \(rule).", context: ["claim": name])
        }
        func string(_ name: String) throws(OIDCError) -> String? {
            guard let value = raw[name] else { return nil }
            guard let text = value.stringValue else { throw invalid(name, "must be a string") }
            return text
        }
        func required(_ name: String) throws(OIDCError) -> String {
            guard let text = try string(name), !text.isEmpty else { throw invalid(name, "is missing") }
            return text
        }
        func date(_ name: String) throws(OIDCError) -> Date? {
            guard let value = raw[name] else { return nil }
            guard let seconds = value.numberValue, seconds.isFinite else { throw invalid(name, "must be a number of seconds") }
            return Date(timeIntervalSince1970: seconds)
        }
        issuer = try required("iss")
        subject = try required("sub")
        switch raw["aud"] {
        case .string(let single)?:
            audience = [single]
        case .array(let list)?:
            let strings = list.compactMap(\.stringValue)
            guard strings.count == list.count, !strings.isEmpty else { throw invalid("aud", "must be a string or a non-empty array of strings") }
            audience = strings
        case nil:
            throw invalid("aud", "is missing")
        default:
            throw invalid("aud", "must be a string or an array of strings")
        }
        guard let exp = try date("exp") else { throw invalid("exp", "is missing") }
        guard let iat = try date("iat") else { throw invalid("iat", "is missing") }
        expiresAt = exp
        issuedAt = iat
        notBefore = try date("nbf")
        authTime = try date("auth_time")
        nonce = try string("nonce")
        authorizedParty = try string("azp")
        accessTokenHash = try string("at_hash")
        acr = try string("acr")
        if let value = raw["amr"] {
            guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count else {
                throw invalid("amr", "must be an array of strings")
            }
            amr = list
        } else {
            amr = nil
        }
        if let legacy = raw["legacy_user_id"] {
            legacyUserID = legacy.stringValue ?? legacy.numberValue.map { String(Int64($0)) }
        } else {
            legacyUserID = nil
        }
        self.raw = raw
        rawJSON = String(decoding: payload, as: UTF8.self)
    }
}

/// A verified ID token.
public struct IDToken: Sendable {
    /// The token as received; a secret (it is a bearer credential for some APIs).
    public let token: Secret
    public let algorithm: JWSAlgorithm
    public let keyID: String?
    public let claims: IDTokenClaims
}
