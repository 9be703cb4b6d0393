internal import OIDC

/// The claims of a JWT access token (RFC 9068 §2.2), read in one pass in document order by
/// fingerprint, as `IDTokenClaims` reads an ID token's: `iss`, `aud` and `exp` required, the
/// others typed when present; every claim kept.
struct AccessTokenClaims: Sendable {
    var issuer: String
    var audience: [String]
    var expiresAt: Double
    var subject: String?
    var clientID: String?
    var issuedAt: Double?
    var notBefore: Double?
    var tokenID: String?
    var scopes: Set<String>
    var keyThumbprint: String?
    var certificateThumbprint: String?
    /// A claim only an ID token (`nonce`, `at_hash`, `c_hash`, `s_hash`) or a logout token or
    /// other security event (`events`) carries.
    var looksLikeAnotherKind = false
    let members: JSONMembers

    init(payload: [UInt8]) throws(Denial) {
        do { members = try StrictJSONParser.parseMembers(payload, maximumDepth: 16) } catch {
            throw .invalidToken(.malformedToken, "The access token's claims are not a strict JSON object (a member given twice, bad UTF-8, too deep or not JSON; RFC 7519 §4).")
        }
        func invalid(_ name: String, _ rule: String) -> Denial {
            .invalidToken(.invalidClaim, "The access token's \(name) claim \(rule).")
        }
        func string(_ name: String, _ value: JSONValue) throws(Denial) -> String {
            guard case .string(let text) = value else { throw invalid(name, "must be a string") }
            return text
        }
        func date(_ name: String, _ value: JSONValue) throws(Denial) -> Double {
            guard let seconds = NumericDate.seconds(value) else { throw invalid(name, NumericDate.rule) }
            return seconds
        }
        var issuer: String?, audience: [String]?, expiresAt: Double?, scope: JSONValue?, scp: JSONValue?
        var confirmation: JSONValue?
        for position in members.names.indices {
            let value = members.values[position]
            switch members.fingerprints[position] {
            case Name.iss: issuer = try string("iss", value)
            case Name.sub: subject = try string("sub", value)
            case Name.aud:
                do { audience = try Audience.values(value) } catch { throw invalid("aud", Audience.rule) }
            case Name.exp: expiresAt = try date("exp", value)
            case Name.iat: issuedAt = try date("iat", value)
            case Name.nbf: notBefore = try date("nbf", value)
            case Name.jti: tokenID = try string("jti", value)
            case Name.clientID where members.names[position] == "client_id": clientID = try string("client_id", value)
            case Name.azp: if clientID == nil { clientID = try string("azp", value) }
            case Name.scope: scope = value
            case Name.scp: scp = value
            case Name.cnf: confirmation = value
            case Name.nonce, Name.atHash, Name.cHash, Name.sHash, Name.events: looksLikeAnotherKind = true
            default: break
            }
        }
        // `client_id` wins over `azp` whatever their order.
        if let position = members.names.firstIndex(of: "client_id"), case .string(let text) = members.values[position] { clientID = text }
        guard let issuer, !issuer.isEmpty else { throw invalid("iss", "is missing") }
        guard let audience else { throw invalid("aud", "is missing") }
        guard let expiresAt else { throw invalid("exp", "is missing") }
        guard let scopes = TokenFacts.scopes(scope: scope, scp: scp) else { throw invalid("scope", "must be a space-separated string") }
        switch TokenFacts.confirmation(confirmation) {
        case .checked(let jkt, let x5t):
            keyThumbprint = jkt
            certificateThumbprint = x5t
        case .malformed: throw invalid("cnf", "must be an object whose jkt and x5t#S256 are non-empty strings")
        case .unsupported(let why): throw .invalidToken(.unsupportedConfirmation, "The access token is refused: \(why).")
        }
        self.issuer = issuer
        self.audience = audience
        self.expiresAt = expiresAt
        self.scopes = scopes
    }

    /// Whether the claim `name` is present (not `null`).
    func has(_ name: String) -> Bool {
        switch name {
        case "sub": subject != nil
        case "client_id": members.names.contains("client_id")
        case "iat": issuedAt != nil
        case "jti": tokenID != nil
        case "nbf": notBefore != nil
        default:
            if let value = members[name], value != .null { true } else { false }
        }
    }

    private enum Name {
        static let iss = JSONMembers.fingerprint("iss")
        static let sub = JSONMembers.fingerprint("sub")
        static let aud = JSONMembers.fingerprint("aud")
        static let exp = JSONMembers.fingerprint("exp")
        static let iat = JSONMembers.fingerprint("iat")
        static let nbf = JSONMembers.fingerprint("nbf")
        static let jti = JSONMembers.fingerprint("jti")
        static let clientID = JSONMembers.fingerprint("client_id")
        static let azp = JSONMembers.fingerprint("azp")
        static let scope = JSONMembers.fingerprint("scope")
        static let scp = JSONMembers.fingerprint("scp")
        static let cnf = JSONMembers.fingerprint("cnf")
        static let nonce = JSONMembers.fingerprint("nonce")
        static let atHash = JSONMembers.fingerprint("at_hash")
        static let cHash = JSONMembers.fingerprint("c_hash")
        static let sHash = JSONMembers.fingerprint("s_hash")
        static let events = JSONMembers.fingerprint("events")
    }
}
