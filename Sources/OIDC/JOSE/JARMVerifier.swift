public import Foundation

/// Verifies a JWT Secured Authorization Response (JARM, OpenID Foundation 2022, §2.4): the
/// `response` parameter of a callback whose request asked for
/// ``AuthorizationResponseMode/jwt`` or ``AuthorizationResponseMode/queryJWT``. It is checked as
/// an ID token is, with the same machinery (the strict compact-JWS reading, the key choice of ``IDTokenVerifier``,
/// ``JWKSCache``'s refetch on an unknown `kid`): a signed JWS (never `none`, never HMAC, never an
/// encrypted JWE) with an algorithm of ``allowedAlgorithms`` and a key of the provider's JWKS; `iss`
/// exactly ``issuer``; `aud` containing ``clientID``; `exp` present and not past (``leeway``); `nbf`,
/// when present, not in the future.
///
/// ```swift
/// let verifier = JARMVerifier(provider: rp.provider, clientID: rp.clientID)
/// let parameters = try await verifier.verify(response, keys: cache)   // ["code": …, "state": …, "iss": …]
/// ```
///
/// Only then are its claims the authorization response's parameters (`code`, `state`, `iss`,
/// `error`, …), which ``AuthorizationResponse`` checks as it checks a query's. Security: a response
/// that fails here proves nothing, not even which login it belongs to, since its `state` is inside.
public struct JARMVerifier: Sendable {
    /// The provider's issuer: the response's `iss` must equal it exactly (JARM §2.4 step 2).
    public var issuer: String
    /// This client's id: the response's `aud` must contain it (JARM §2.4 step 3).
    public var clientID: String
    /// The accepted signature algorithms; RS256, JARM's default, unless the provider names others.
    /// HMAC algorithms are never accepted (a JARM response signed with the client secret is not
    /// supported).
    public var allowedAlgorithms: Set<JWSAlgorithm>
    /// Tolerance for clock differences on `exp` and `nbf`: 30 s by default (a response lives a few
    /// minutes at most).
    public var leeway: TimeInterval = 30
    /// Bound on the response's length: 64 KiB by default.
    public var maximumLength = ParsedJWS.defaultMaximumLength

    /// A verifier for `issuer`'s responses to `clientID`, accepting `allowedAlgorithms` (RS256 by
    /// default, JARM §3).
    public init(issuer: String, clientID: String, allowedAlgorithms: Set<JWSAlgorithm> = [.rs256]) {
        self.issuer = issuer
        self.clientID = clientID
        self.allowedAlgorithms = allowedAlgorithms
    }

    /// A verifier for `provider`'s responses to `clientID`: the algorithms of its
    /// ``ProviderConfiguration/authorizationSigningAlgorithms`` this library verifies (HMAC left
    /// out), or RS256 when it names none.
    public init(provider: ProviderConfiguration, clientID: String) {
        let named = Set(provider.authorizationSigningAlgorithms.compactMap(JWSAlgorithm.init(rawValue:)).filter { !$0.isHMACAlgorithm })
        self.init(issuer: provider.issuer, clientID: clientID, allowedAlgorithms: named.isEmpty ? [.rs256] : named)
    }

    /// Verifies `response` with a key of `keys` at the time `now`.
    ///
    /// - Returns: the response parameters: every claim whose value is a string (`code`, `state`,
    ///   `iss`, `error`, `error_description`, …) but `aud`.
    /// - Throws: an ``OIDCError`` of category ``OIDCError/Category/security`` naming the rule that
    ///   failed: ``OIDCError/Code/algorithmNotAllowed`` (also for an encrypted response, a JWE),
    ///   ``OIDCError/Code/malformedToken``, ``OIDCError/Code/keyNotFound``,
    ///   ``OIDCError/Code/ambiguousKey``, ``OIDCError/Code/invalidSignature``,
    ///   ``OIDCError/Code/issuerMismatch``, ``OIDCError/Code/audienceMismatch``,
    ///   ``OIDCError/Code/tokenExpired``, ``OIDCError/Code/tokenNotYetValid``,
    ///   ``OIDCError/Code/invalidClaim``. No message holds the response or the code.
    public func verify(_ response: String, keys: JWKSet, now: Date = Date()) throws(OIDCError) -> [String: String] {
        if response.utf8.lazy.filter({ $0 == UInt8(ascii: ".") }).count == 4 {
            throw OIDCError(
                .algorithmNotAllowed,
                "The authorization response is encrypted (a JWE): encrypted JARM responses are not supported; register the client without authorization_encrypted_response_alg.",
                context: ["response": "encrypted"]
            )
        }
        let jws = try ParsedJWS(response, maximumLength: maximumLength)
        var keyChoice = IDTokenVerifier(issuer: issuer, clientID: clientID, nonce: .notChecked)
        keyChoice.allowedAlgorithms = allowedAlgorithms.filter { !$0.isHMACAlgorithm }
        let key = try keyChoice.selectKey(for: jws, in: keys)
        try jws.verifySignature(with: key)
        let claims: [String: JSONValue]
        do { claims = try StrictJSONParser.parseObject(jws.payload, maximumDepth: ParsedJWS.maximumDepth) } catch {
            throw ParsedJWS.malformed("the claims are not a valid JSON object (\(error))")
        }
        try validate(claims, now: now)
        var parameters: [String: String] = [:]
        for (name, value) in claims where name != "aud" {
            if case .string(let text) = value { parameters[name] = text }
        }
        return parameters
    }

    /// JARM §2.4 steps 2 to 4 on verified claims.
    private func validate(_ claims: [String: JSONValue], now: Date) throws(OIDCError) {
        guard leeway.isFinite, leeway >= 0, now.timeIntervalSince1970.isFinite else {
            throw .invalidArgument("The JARM verifier's leeway and clock must be finite (and the leeway not negative).")
        }
        func invalid(_ name: String, _ rule: String) -> OIDCError {
            OIDCError(.invalidClaim, "The authorization response's '\(name)' claim \(rule).", context: ["claim": name])
        }
        func date(_ name: String) throws(OIDCError) -> TimeInterval? {
            guard let value = claims[name] else { return nil }
            guard let seconds = NumericDate.seconds(value) else { throw invalid(name, NumericDate.rule) }
            return seconds
        }
        guard case .string(let found)? = claims["iss"] else { throw invalid("iss", "is required and must be a string") }
        guard found == issuer else {
            throw OIDCError(
                .issuerMismatch, "The authorization response was issued by another issuer than the one the login was sent to.",
                context: ["expected": issuer, "found": UntrustedText.sanitized(found)]
            )
        }
        let audience: [String]
        do {
            guard let values = try Audience.values(claims["aud"]) else { throw Audience.Malformed() }
            audience = values
        } catch { throw invalid("aud", "is required and \(Audience.rule)") }
        guard audience.contains(clientID) else {
            throw OIDCError(
                .audienceMismatch, "The authorization response is not meant for this client (aud does not contain the client id).",
                context: ["expected": clientID]
            )
        }
        let now = now.timeIntervalSince1970
        guard let expiresAt = try date("exp") else { throw invalid("exp", "is required") }
        guard now < expiresAt + leeway else {
            throw OIDCError(
                .tokenExpired,
                "The authorization response expired at \(IDTokenVerifier.format(Date(timeIntervalSince1970: expiresAt))) (leeway \(leeway) s); start the login again, and check this computer's clock.",
                context: ["claim": "exp"]
            )
        }
        if let notBefore = try date("nbf"), notBefore > now + leeway {
            throw OIDCError(.tokenNotYetValid, "The authorization response is not valid yet (nbf beyond the \(leeway) s leeway); check the clocks.", context: ["claim": "nbf"])
        }
    }
}
