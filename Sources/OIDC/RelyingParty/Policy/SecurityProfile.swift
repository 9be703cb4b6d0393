internal import Foundation

/// A security profile a ``RelyingParty`` holds itself to: a policy value, applied where the relying
/// party builds its requests and verifiers. Every setting the profile forbids is refused before
/// anything is sent, with an error (``OIDCError/Code/profileViolation``) naming the rule; every ID
/// token and signed response is verified with the profile's algorithms only, the refreshed ones of
/// its sessions too (``AuthenticatedSession/Options/securityProfile``).
///
/// ```swift
/// let rp = RelyingParty(
///     provider: provider, clientID: "bank-app", authentication: .privateKeyJWT(key),
///     configuration: RelyingParty.Configuration(dpop: .on, securityProfile: .fapi2))
/// ```
///
/// ``none`` does nothing. Compare with `==` (`profile == .fapi2`); a `switch` over profiles needs a
/// `default`, since a profile is a value, not an enumeration.
public struct SecurityProfile: Sendable, Hashable, RawRepresentable, CaseIterable, CustomStringConvertible {
    /// The profile's name: `none` or `fapi2`.
    public let rawValue: String
    /// The signature algorithms every ID token and signed authorization response must use; any
    /// the verifier takes when `nil`.
    public let signatureAlgorithms: Set<JWSAlgorithm>?
    /// Whether every authorization request is pushed (RFC 9126) and carries PKCE S256 and the
    /// RFC 9207 `iss` requirement.
    let requiresPushedCodeFlow: Bool
    /// The pushed request URIs refused: those that live this many seconds or more.
    let requestURILifetimeLimit: Int?
    /// The rules a relying party's configuration must pass, in the order they are checked.
    let rules: [SecurityProfileRule]

    /// No profile: what the provider and the settings allow.
    public static let none = SecurityProfile(rawValue: "none", signatureAlgorithms: nil, requiresPushedCodeFlow: false, requestURILifetimeLimit: nil, rules: [])

    /// The [FAPI 2.0 Security Profile](https://openid.net/specs/fapi-security-profile-2_0-final.html):
    /// pushed authorization requests, sender-constrained tokens (DPoP or mTLS), `private_key_jwt`
    /// or mTLS client authentication, the RFC 9207 `iss` in every authorization response, ID tokens
    /// signed with PS256, ES256 or EdDSA, request URIs that live under 600 seconds.
    public static let fapi2 = SecurityProfile(
        rawValue: "fapi2", signatureAlgorithms: SecurityProfileRule.fapi2Algorithms, requiresPushedCodeFlow: true,
        requestURILifetimeLimit: 600, rules: SecurityProfileRule.fapi2)

    /// Every profile this library knows: ``none`` and ``fapi2``.
    public static let allCases: [SecurityProfile] = [.none, .fapi2]

    /// The profile named `rawValue` (`none`, `fapi2`); `nil` for another name.
    public init?(rawValue: String) {
        guard let known = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = known
    }

    private init(
        rawValue: String, signatureAlgorithms: Set<JWSAlgorithm>?, requiresPushedCodeFlow: Bool, requestURILifetimeLimit: Int?,
        rules: [SecurityProfileRule]
    ) {
        self.rawValue = rawValue
        self.signatureAlgorithms = signatureAlgorithms
        self.requiresPushedCodeFlow = requiresPushedCodeFlow
        self.requestURILifetimeLimit = requestURILifetimeLimit
        self.rules = rules
    }

    /// The profile's name (``rawValue``).
    public var description: String { rawValue }

    /// Whether two profiles are the same one: profiles are told apart by name.
    public static func == (lhs: SecurityProfile, rhs: SecurityProfile) -> Bool { lhs.rawValue == rhs.rawValue }

    /// Hashes the profile's name.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

extension SecurityProfile {
    /// This profile, or `fallback` when this is ``none``: a session's own profile, else its relying party's.
    func orElse(_ fallback: SecurityProfile) -> SecurityProfile { self == .none ? fallback : self }

    /// Checks `relyingParty`'s settings against this profile before a login sends anything: each
    /// rule of the profile's table in turn (for FAPI 2.0: a provider with pushed authorization
    /// requests, a sender constraint, the algorithms of every key, `private_key_jwt` or mTLS client
    /// authentication). ``none`` checks nothing.
    ///
    /// - Throws: ``OIDCError/Code/profileViolation`` naming the rule broken and what to set.
    public func validate(_ relyingParty: RelyingParty) throws(OIDCError) {
        for rule in rules {
            if let what = rule.violation(relyingParty) { throw rule.refusal(what) }
        }
    }

    /// Holds `verifier` to the profile's signature algorithms (FAPI 2.0 §5.4.1: PS256, ES256 or EdDSA).
    package func constrain(_ verifier: inout IDTokenVerifier) {
        if let signatureAlgorithms { verifier.allowedAlgorithms.formIntersection(signatureAlgorithms) }
    }

    /// Holds `verifier` of signed authorization responses (JARM) to the profile's signature algorithms.
    package func constrain(_ verifier: inout JARMVerifier) {
        if let signatureAlgorithms { verifier.allowedAlgorithms.formIntersection(signatureAlgorithms) }
    }

    /// Gives `request` what the profile requires of every authorization request: under FAPI 2.0,
    /// the RFC 9207 `iss` check of its response (§5.3.2.2).
    package func constrain(_ request: inout AuthorizationRequest) {
        if requiresPushedCodeFlow { request.requiresIssuerInResponse = true }
    }

    /// Whether every authorization request is pushed (RFC 9126) under this profile.
    package var pushesAuthorizationRequests: Bool { requiresPushedCodeFlow }

    /// Refuses a pushed request URI the profile does not allow: under FAPI 2.0 one that lives 600
    /// seconds or more (§5.3.2.2).
    ///
    /// - Throws: ``OIDCError/Code/profileViolation``; the browser was not sent to the provider.
    package func check(_ pushed: PushedAuthorization) throws(OIDCError) {
        guard let limit = requestURILifetimeLimit, pushed.expiresIn >= limit else { return }
        let rule = "Security Profile §5.3.2.2, request_uri lifetime"
        throw OIDCError(
            .profileViolation,
            "FAPI 2.0 (\(rule)): the provider's request URI lives \(pushed.expiresIn) s, and FAPI 2.0 allows less than \(limit) s; the provider is not FAPI 2.0 compliant. The browser was not sent to it.",
            context: ["profile": rawValue, "rule": rule, "expires_in": String(pushed.expiresIn)]
        )
    }

    /// Refuses an authorization request that lacks what the profile requires (under FAPI 2.0: PKCE
    /// S256, an issuer to check the response against, and the RFC 9207 `iss` requirement), before
    /// it is sent (`sending`) or its code exchanged.
    ///
    /// - Throws: ``OIDCError/Code/profileViolation``.
    package func check(_ request: AuthorizationRequest, sending: Bool) throws(OIDCError) {
        guard requiresPushedCodeFlow else { return }
        guard request.pkce?.method == PKCE.method, request.issuer != nil else {
            throw OIDCError(
                .profileViolation,
                "FAPI 2.0 (Security Profile §5.3.2.2, PKCE S256 and the iss check): the request has no PKCE S256 challenge or no issuer to check the response against; make it with authorizationRequest(redirectURI:) of this relying party and leave pkce and issuer as they are.",
                context: ["profile": rawValue, "rule": "Security Profile §5.3.2.2, PKCE and iss"]
            )
        }
        guard !request.requiresIssuerInResponse else { return }
        throw OIDCError(
            .profileViolation,
            sending
                ? "FAPI 2.0: this request was not made by this relying party's authorizationRequest(redirectURI:), so it lacks the RFC 9207 iss requirement or the DPoP key; make it with that method. No authorization request was sent."
                : "FAPI 2.0 (Security Profile §5.3.2.2, iss in the authorization response): the request does not require the RFC 9207 iss; make it with authorizationRequest(redirectURI:) of this relying party. Nothing was exchanged.",
            context: ["profile": rawValue]
        )
    }

    /// Refuses the device flow (RFC 8628) where the profile holds logins to the code flow (FAPI 2.0).
    ///
    /// - Throws: ``OIDCError/Code/profileViolation``; nothing was sent.
    package func checkDeviceFlow(_ flow: String = "the device flow") throws(OIDCError) {
        guard requiresPushedCodeFlow else { return }
        let rule = "Security Profile §5.3.2.2, the authorization code flow"
        throw OIDCError(
            .profileViolation,
            "FAPI 2.0 (\(rule)): the profile holds browser logins through pushed authorization requests; \(flow) is outside it. Log in with the code flow, or set RelyingParty.Configuration(securityProfile: .none) for this login. Nothing was sent.",
            context: ["profile": rawValue, "rule": rule]
        )
    }
}
