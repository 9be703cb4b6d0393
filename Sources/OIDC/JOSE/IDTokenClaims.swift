public import Foundation

/// The claims of a verified ID token (OIDC Core §2), with the raw JSON kept.
public struct IDTokenClaims: Sendable {
    /// `iss`: the issuer that made the token (required).
    public let issuer: String
    /// `sub`: the user's identifier at the issuer (required, not empty).
    public let subject: String
    /// `aud`: the clients the token is meant for (required); a single string becomes a one-element array.
    public let audience: [String]
    /// `exp`: when the token expires (required).
    public let expiresAt: Date
    /// `iat`: when the token was issued (required).
    public let issuedAt: Date
    /// `nbf`: the token is not valid before this moment, when present.
    public let notBefore: Date?
    /// `auth_time`: when the user authenticated, when present (the verifier requires it when `max_age`
    /// was sent).
    public let authTime: Date?
    /// `nonce`: the value sent in the authorization request, when present.
    public let nonce: String?
    /// `azp`: the client the token was issued to, when present (the verifier requires it when there are
    /// several audiences).
    public let authorizedParty: String?
    /// `at_hash`: base64url of the left half of the access token's hash, when present.
    public let accessTokenHash: String?
    /// `acr`: the authentication context class the authentication satisfied, when present.
    public let acr: String?
    /// `amr`: the authentication methods used (RFC 8176), such as `["pwd", "otp"]`, when present.
    public let amr: [String]?
    /// Schibsted's `legacy_user_id`, when present (never required).
    public let legacyUserID: String?
    /// Every claim, as parsed.
    public var raw: [String: JSONValue] { members.dictionary }
    /// The payload exactly as signed (UTF-8 JSON).
    public var rawJSON: String { String(decoding: payload, as: UTF8.self) }

    private let payload: [UInt8]

    private let members: JSONMembers

    /// Whether the token has an `events` claim: a Security Event Token (RFC 8417), such as a
    /// back-channel logout token, never an ID token.
    package var hasEvents: Bool { members.names.contains("events") }

    /// Reads the registered claims; ``IDTokenVerifier`` checks their values.
    ///
    /// One pass over the claims in document order, without hashing: this runs on every verification.
    ///
    /// - Throws: ``OIDCError/Code/invalidClaim`` when a claim has the wrong type, a required one is
    ///   missing, or a date is not a finite number.
    package init(payload: [UInt8]) throws(OIDCError) {
        let members: JSONMembers
        do { members = try StrictJSONParser.parseMembers(payload, maximumDepth: ParsedJWS.maximumDepth) } catch {
            throw ParsedJWS.malformed("the claims are not a valid JSON object (\(error))")
        }
        func invalid(_ name: String, _ rule: String) -> OIDCError {
            OIDCError(.invalidClaim, "The ID token's '\(name)' claim \(rule).", context: ["claim": name])
        }
        func string(_ name: String, _ value: JSONValue) throws(OIDCError) -> String {
            guard case .string(let text) = value else { throw invalid(name, "must be a string") }
            return text
        }
        func date(_ name: String, _ value: JSONValue) throws(OIDCError) -> Date {
            guard let seconds = NumericDate.seconds(value) else { throw invalid(name, NumericDate.rule) }
            return Date(timeIntervalSince1970: seconds)
        }
        func strings(_ name: String, _ list: [JSONValue], rule: String) throws(OIDCError) -> [String] {
            var result: [String] = []
            result.reserveCapacity(list.count)
            for element in list {
                guard case .string(let text) = element else { throw invalid(name, rule) }
                result.append(text)
            }
            return result
        }
        var issuer: String?, subject: String?, audience: [String]?, expiresAt: Date?, issuedAt: Date?
        var notBefore: Date?, authTime: Date?, nonce: String?, authorizedParty: String?, accessTokenHash: String?
        var acr: String?, amr: [String]?, legacyUserID: String?
        for position in members.names.indices {
            let value = members.values[position]
            // Claim names are matched by fingerprint (no string comparisons for the short ones).
            switch members.fingerprints[position] {
            case ClaimName.iss: issuer = try string("iss", value)
            case ClaimName.sub: subject = try string("sub", value)
            case ClaimName.aud:
                do { audience = try Audience.values(value) } catch { throw invalid("aud", Audience.rule) }
            case ClaimName.exp: expiresAt = try date("exp", value)
            case ClaimName.iat: issuedAt = try date("iat", value)
            case ClaimName.nbf: notBefore = try date("nbf", value)
            case ClaimName.authTime where members.names[position] == "auth_time": authTime = try date("auth_time", value)
            case ClaimName.nonce: nonce = try string("nonce", value)
            case ClaimName.azp: authorizedParty = try string("azp", value)
            case ClaimName.atHash: accessTokenHash = try string("at_hash", value)
            case ClaimName.acr: acr = try string("acr", value)
            case ClaimName.amr:
                guard case .array(let list) = value else { throw invalid("amr", "must be an array of strings") }
                amr = try strings("amr", list, rule: "must be an array of strings")
            case ClaimName.legacyUserID where members.names[position] == "legacy_user_id":
                legacyUserID = value.stringValue ?? value.numberValue.flatMap { Int64(exactly: $0) }.map { String($0) }
            default: break
            }
        }
        guard let issuer, !issuer.isEmpty else { throw invalid("iss", "is missing") }
        guard let subject, !subject.isEmpty else { throw invalid("sub", "is missing") }
        guard let audience else { throw invalid("aud", "is missing") }
        guard let expiresAt else { throw invalid("exp", "is missing") }
        guard let issuedAt else { throw invalid("iat", "is missing") }
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.authTime = authTime
        self.nonce = nonce
        self.authorizedParty = authorizedParty
        self.accessTokenHash = accessTokenHash
        self.acr = acr
        self.amr = amr
        self.legacyUserID = legacyUserID
        self.members = members
        self.payload = payload
    }
}

/// Fingerprints of the registered claim names (``JSONMembers/fingerprint(_:)``).
private enum ClaimName {
    static let iss = JSONMembers.fingerprint("iss")
    static let sub = JSONMembers.fingerprint("sub")
    static let aud = JSONMembers.fingerprint("aud")
    static let exp = JSONMembers.fingerprint("exp")
    static let iat = JSONMembers.fingerprint("iat")
    static let nbf = JSONMembers.fingerprint("nbf")
    static let authTime = JSONMembers.fingerprint("auth_time")
    static let nonce = JSONMembers.fingerprint("nonce")
    static let azp = JSONMembers.fingerprint("azp")
    static let atHash = JSONMembers.fingerprint("at_hash")
    static let acr = JSONMembers.fingerprint("acr")
    static let amr = JSONMembers.fingerprint("amr")
    static let legacyUserID = JSONMembers.fingerprint("legacy_user_id")
}

/// A verified ID token.
public struct IDToken: Sendable {
    /// The token as received; a secret (it is a bearer credential for some APIs).
    public let token: Secret
    /// The algorithm the signature was verified with (the header's `alg`).
    public let algorithm: JWSAlgorithm
    /// The header's `kid`, if any.
    public let keyID: String?
    /// The verified claims.
    public let claims: IDTokenClaims
}
