public import Foundation
public import OIDC

extension TestProvider {
    /// What a logout token minted by ``logoutToken(_:)`` carries. The defaults make a valid
    /// OIDC Back-Channel Logout 1.0 token (§2.4); each member can be changed or removed to make an
    /// invalid one.
    public struct LogoutTokenContents: Sendable {
        /// `sub`; `nil` leaves it out.
        public var subject: String?
        /// `sid`; `nil` leaves it out.
        public var sessionID: String?
        /// `aud`: the default client's id unless changed.
        public var audience: [String]
        /// `iat`: now unless changed.
        public var issuedAt: Date
        /// `exp`; `nil` (the default, as glewlwyd 2.7 sends) leaves it out.
        public var expiresAt: Date?
        /// `jti`: a new random one unless changed; `nil` leaves it out.
        public var tokenID: String?
        /// The header's `typ`: `logout+jwt` unless changed; `nil` leaves it out.
        public var type: String?
        /// Claims added last, replacing any of the above (`nonce`, another `events`, …).
        public var extraClaims: [String: JSONValue]

        /// A valid logout token's contents for `subject` and `sessionID` (at least one of them).
        public init(
            subject: String? = TestUser.default.subject, sessionID: String? = nil, audience: [String] = [TestProvider.Client.default.id],
            issuedAt: Date = Date(), expiresAt: Date? = nil, tokenID: String? = UUID().uuidString, type: String? = "logout+jwt",
            extraClaims: [String: JSONValue] = [:]
        ) {
            self.subject = subject
            self.sessionID = sessionID
            self.audience = audience
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
            self.tokenID = tokenID
            self.type = type
            self.extraClaims = extraClaims
        }

        /// A valid logout token's contents for the user and session of `login` (its `sub` and
        /// `sid`), meant for its client.
        public init(for login: StoredLogin, issuedAt: Date = Date()) {
            self.init(subject: login.subject, sessionID: login.sessionID, audience: [login.clientID], issuedAt: issuedAt)
        }
    }

    /// A logout token (OIDC Back-Channel Logout 1.0 §2.4) signed like this provider's ID tokens:
    /// with its current key of the configured ID-token algorithm, whose public half its JWKS
    /// publishes; `iss` is ``issuer``, `events` the back-channel logout event.
    public func logoutToken(_ contents: LogoutTokenContents = LogoutTokenContents()) async throws -> String {
        let key = await state.keys.signingKey(configuration.idTokenAlgorithm)
        var claims: [String: Any] = [
            "iss": issuer, "aud": contents.audience.count == 1 ? contents.audience[0] : contents.audience,
            "iat": Int(contents.issuedAt.timeIntervalSince1970),
            "events": ["http://schemas.openid.net/event/backchannel-logout": [String: Any]()],
        ]
        claims["sub"] = contents.subject
        claims["sid"] = contents.sessionID
        claims["jti"] = contents.tokenID
        claims["exp"] = contents.expiresAt.map { Int($0.timeIntervalSince1970) }
        for (name, value) in contents.extraClaims { claims[name] = value.foundationValue }
        var header: [String: Any] = ["alg": key.algorithm.rawValue]
        if let keyID = key.keyID { header["kid"] = keyID }
        header["typ"] = contents.type
        return try key.sign(headerJSON: try TestSigningKey.json(header), payloadJSON: try TestSigningKey.json(claims))
    }

    /// Signs exactly these header and payload texts with the provider's current ID-token key (for
    /// malformed-input tests: duplicate members, deep nesting, odd headers, correctly signed).
    public func signLikeIDTokens(headerJSON: String, payloadJSON: String) async throws -> String {
        try await state.keys.signingKey(configuration.idTokenAlgorithm).sign(headerJSON: headerJSON, payloadJSON: payloadJSON)
    }
}
