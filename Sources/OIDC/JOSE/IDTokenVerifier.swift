public import Foundation

/// Verifies ID tokens as OIDC Core §3.1.3.7 requires: signature through OpenSSL with a key from the
/// provider's JWKS, then every claim rule.
///
/// ```swift
/// let verifier = IDTokenVerifier(issuer: "https://idp.example", clientID: "my-app", nonce: .expected(request.nonce!))
/// let idToken = try verifier.verify(token, keys: jwks)
/// ```
public struct IDTokenVerifier: Sendable {
    /// What the token's `nonce` must be.
    public enum NonceRule: Sendable, Equatable {
        /// The nonce sent in the authorization request; the token must carry it (constant-time).
        case expected(String)
        /// No nonce was sent on purpose: the token must carry none.
        case absent
        /// Not checked (debugging, or refreshed ID tokens of providers that repeat the original nonce).
        case notChecked
    }

    /// The expected issuer: the token's `iss` must match it (see ``issuerMatching``).
    public var issuer: String
    /// This client's id: `aud` must contain it, and `azp`, when present, must equal it.
    public var clientID: String
    /// How `iss` is compared with ``issuer``; ``IssuerMatching/exact`` by default.
    public var issuerMatching: IssuerMatching = .exact
    /// What the token's `nonce` must be.
    public var nonce: NonceRule
    /// Accepted algorithms; the asymmetric ones by default. HMAC also needs ``hmacSecret``.
    public var allowedAlgorithms: Set<JWSAlgorithm> = JWSAlgorithm.asymmetric
    /// The client secret, for HS256/384/512 ID tokens (OIDC Core §10.1); only with those allowed.
    public var hmacSecret: Secret?
    /// Tolerance for clock differences on `exp`, `iat`, `nbf` and `auth_time`: 60 s by default.
    public var leeway: TimeInterval = 60
    /// Added to `now`: the provider's clock minus ours (from its `Date` header), when known.
    public var clockOffset: TimeInterval = 0
    /// `max_age` sent in the request: `auth_time` is then required and checked.
    public var maxAge: Int?
    /// The access token issued with the ID token: `at_hash`, when present, must match it.
    public var accessToken: Secret?
    /// When set, `acr` must be one of these.
    public var acceptedACRValues: Set<String>?
    /// When set, `amr` must contain all of these (Schibsted MFA: ``Schibsted/MFAMethod/amrValue``).
    public var requiredAMRValues: [String]?
    /// Refuse tokens without `kid` (the Schibsted SDK's rule).
    public var requiresKeyID = false
    /// Bound on the token's length: 64 KiB by default.
    public var maximumTokenLength = ParsedJWS.defaultMaximumLength

    /// A verifier with the defaults: the asymmetric algorithms, a 60-second leeway, no clock offset,
    /// exact issuer matching, and no `max_age`, `at_hash`, `acr` or `amr` requirement.
    public init(issuer: String, clientID: String, nonce: NonceRule) {
        self.issuer = issuer
        self.clientID = clientID
        self.nonce = nonce
    }

    /// Verifies `token` with a key from `keys` at the time `now`.
    ///
    /// - Throws: an ``OIDCError`` of category ``OIDCError/Category/security`` naming the rule that failed:
    ///   ``OIDCError/Code/malformedToken``, ``OIDCError/Code/algorithmNotAllowed``,
    ///   ``OIDCError/Code/keyNotFound``, ``OIDCError/Code/ambiguousKey``, ``OIDCError/Code/invalidSignature``,
    ///   ``OIDCError/Code/issuerMismatch``, ``OIDCError/Code/audienceMismatch``, ``OIDCError/Code/tokenExpired``,
    ///   ``OIDCError/Code/tokenNotYetValid``, ``OIDCError/Code/nonceMismatch``, ``OIDCError/Code/invalidClaim``.
    public func verify(_ token: String, keys: JWKSet, now: Date = Date()) throws(OIDCError) -> IDToken {
        let jws = try ParsedJWS(token, maximumLength: maximumTokenLength)
        let key = try selectKey(for: jws, in: keys)
        try jws.verifySignature(with: key)
        let claims = try IDTokenClaims(payload: jws.payload)
        try validate(claims, algorithm: jws.algorithm, now: now)
        return IDToken(token: Secret(token), algorithm: jws.algorithm, keyID: jws.keyID, claims: claims)
    }

    package func selectKey(for jws: ParsedJWS, in keys: JWKSet) throws(OIDCError) -> JWK {
        try Self.checkType(jws.type)
        guard allowedAlgorithms.contains(jws.algorithm) else {
            throw OIDCError(
                .algorithmNotAllowed,
                jws.algorithm.isHMACAlgorithm
                    ? "The token is signed with \(jws.algorithm.rawValue), which is accepted only when the client explicitly allows it with its secret."
                    : "The token's algorithm \(jws.algorithm.rawValue) is not among the allowed ones.",
                context: ["alg": jws.algorithm.rawValue]
            )
        }
        if jws.algorithm.isHMACAlgorithm {
            guard let hmacSecret else {
                throw OIDCError(.algorithmNotAllowed, "The token is signed with \(jws.algorithm.rawValue) and no client secret is configured for it.")
            }
            return JWK(hmacSecret: hmacSecret)
        }
        if requiresKeyID, jws.keyID == nil {
            throw OIDCError(.keyNotFound, "The token's header names no key (kid), which this provider always sends.")
        }
        return try keys.key(for: jws.algorithm, keyID: jws.keyID)
    }

    /// RFC 8725 §3.11: a JWT typed as another kind (`at+jwt` access tokens, `logout+jwt` logout
    /// tokens, `secevent+jwt`, `dpop+jwt`, …) is never accepted as an ID token, even when its
    /// signature and claims would pass. No `typ`, `JWT` and `JOSE` (any case, with or without
    /// `application/`) are accepted.
    static func checkType(_ type: String?) throws(OIDCError) {
        guard let type else { return }
        var media = type.lowercased()
        if media.hasPrefix("application/") { media.removeFirst("application/".count) }
        guard media == "jwt" || media == "jose" else {
            throw OIDCError(
                .malformedToken,
                "The token is typed '\(UntrustedText.sanitized(type, limit: 40))', another kind of JWT than an ID token (RFC 8725 §3.11); it is not accepted as one.",
                context: ["typ": UntrustedText.sanitized(type, limit: 40)]
            )
        }
    }

    /// Checks the claim rules of OIDC Core §3.1.3.7 on already-verified claims.
    package func validate(_ claims: IDTokenClaims, algorithm: JWSAlgorithm, now: Date) throws(OIDCError) {
        guard leeway.isFinite, leeway >= 0, clockOffset.isFinite, now.timeIntervalSince1970.isFinite else {
            throw .invalidArgument("The verifier's leeway, clock offset and clock must be finite (and the leeway not negative).")
        }
        let now = now.timeIntervalSince1970 + clockOffset
        guard issuerMatching.matches(claims.issuer, expected: issuer) else {
            throw OIDCError(
                .issuerMismatch, "The ID token was issued by another issuer than the expected one.",
                context: ["expected": issuer, "found": UntrustedText.sanitized(claims.issuer)]
            )
        }
        guard claims.audience.contains(clientID) else {
            throw OIDCError(
                .audienceMismatch, "The ID token is not meant for this client (aud does not contain the client id).",
                context: ["expected": clientID]
            )
        }
        // RFC 8417 §4.3, Back-Channel Logout 1.0 §2.4: a Security Event Token (a logout token)
        // is not an ID token, even untyped and with every ID-token claim.
        guard !claims.hasEvents else {
            throw OIDCError(
                .invalidClaim, "The token has an 'events' claim: it is a security event token (such as a logout token), not an ID token (RFC 8417 §4.3).",
                context: ["claim": "events"])
        }
        if claims.audience.count > 1, claims.authorizedParty == nil {
            throw OIDCError(.invalidClaim, "The ID token has several audiences and no 'azp' claim.", context: ["claim": "azp"])
        }
        if let azp = claims.authorizedParty, azp != clientID {
            throw OIDCError(.invalidClaim, "The ID token's 'azp' is not this client.", context: ["claim": "azp", "expected": clientID])
        }
        guard now < claims.expiresAt.timeIntervalSince1970 + leeway else {
            throw OIDCError(
                .tokenExpired, "The ID token expired at \(Self.format(claims.expiresAt)) (leeway \(leeway) s); get a fresh one.",
                context: ["claim": "exp"]
            )
        }
        guard claims.issuedAt.timeIntervalSince1970 <= now + leeway else {
            throw OIDCError(
                .tokenNotYetValid, "The ID token was issued in the future (iat beyond the \(leeway) s leeway); check the clocks.",
                context: ["claim": "iat"]
            )
        }
        if let notBefore = claims.notBefore, notBefore.timeIntervalSince1970 > now + leeway {
            throw OIDCError(.tokenNotYetValid, "The ID token is not valid yet (nbf beyond the \(leeway) s leeway).", context: ["claim": "nbf"])
        }
        switch nonce {
        case .expected(let expected):
            guard let found = claims.nonce, ConstantTime.equals(found, expected) else {
                throw OIDCError(
                    .nonceMismatch,
                    claims.nonce == nil ? "The ID token carries no nonce, but one was sent." : "The ID token's nonce is not the one sent (possible replay)."
                )
            }
        case .absent:
            guard claims.nonce == nil else {
                throw OIDCError(.nonceMismatch, "The ID token carries a nonce, but none was sent (possible replay).")
            }
        case .notChecked:
            break
        }
        if let accessToken, let atHash = claims.accessTokenHash {
            try checkAccessTokenHash(atHash, accessToken: accessToken, algorithm: algorithm)
        }
        if let maxAge {
            guard let authTime = claims.authTime else {
                throw OIDCError(.invalidClaim, "max_age was sent, so the ID token must carry auth_time, and it does not.", context: ["claim": "auth_time"])
            }
            guard authTime.timeIntervalSince1970 + Double(maxAge) + leeway >= now else {
                throw OIDCError(
                    .invalidClaim, "The user authenticated longer ago than max_age (\(maxAge) s) allows; log in again.",
                    context: ["claim": "auth_time"]
                )
            }
        }
        if let acceptedACRValues {
            guard let acr = claims.acr, acceptedACRValues.contains(acr) else {
                throw OIDCError(
                    .invalidClaim, "The ID token's acr is not one of the required values \(acceptedACRValues.sorted()).",
                    context: ["claim": "acr"]
                )
            }
        }
        if let requiredAMRValues {
            let amr = claims.amr ?? []
            let missing = requiredAMRValues.filter { !amr.contains($0) }
            guard missing.isEmpty else {
                throw OIDCError(
                    .invalidClaim, "The ID token's amr lacks the required authentication method(s) \(missing); the multi-factor step did not happen.",
                    context: ["claim": "amr"]
                )
            }
        }
    }

    static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let unix = seconds.isFinite && abs(seconds) < 1e15 ? String(Int64(seconds.rounded(.down))) : String(seconds)
        return "\(date.formatted(.iso8601)) (Unix \(unix))"
    }

    /// OIDC Core §3.1.3.8: base64url of the left half of the hash of the access token's ASCII octets,
    /// with the hash of the ID token's algorithm (SHA-512 for EdDSA with Ed25519).
    private func checkAccessTokenHash(_ atHash: String, accessToken: Secret, algorithm: JWSAlgorithm) throws(OIDCError) {
        let digest = try LibCrypto.digest(Array(accessToken.revealedValue.utf8), name: algorithm.digestName ?? "SHA512")
        let expected = Base64URLEncoding.encode(digest.prefix(digest.count / 2))
        guard ConstantTime.equals(atHash, expected) else {
            throw OIDCError(.invalidClaim, "The ID token's at_hash does not match the access token issued with it.", context: ["claim": "at_hash"])
        }
    }
}
