public import Foundation

/// The tokens of one login, with absolute times (RFC 6749 §5.1).
///
/// Every token is a ``Secret``: printing a `TokenSet` shows `<redacted>` for each of them.
public struct TokenSet: Sendable, Equatable {
    /// The bearer token for API calls.
    public var accessToken: Secret
    /// `token_type`, compared case-insensitively; `Bearer` for every provider this library knows.
    public var tokenType: String
    /// Absent when the provider issued none (no `offline_access`), or for host-provided tokens.
    public var refreshToken: Secret?
    /// The ID token as received. ``TokenClient/completeLogin(_:for:keys:now:configure:)`` verifies it
    /// before returning; ``TokenClient/exchangeCode(_:codeVerifier:redirectURI:scopes:)`` and
    /// ``TokenClient/refresh(_:scopes:)`` do not.
    public var idToken: Secret?
    /// When the access token expires: `expires_in` plus the moment the response was received.
    /// `nil` when the provider did not say.
    public var expiresAt: Date?
    /// The granted scope values (the response's `scope`, or the requested ones when it has none).
    public var scopes: [String]
    /// When the response was received.
    public var receivedAt: Date
    /// What the tokens were granted for as structured data (RFC 9396 §7: the response's
    /// `authorization_details`), when the provider said.
    public var authorizationDetails: AuthorizationDetails?

    /// A token set from its parts: for tokens a host application provides, and for tests. The type is
    /// `Bearer` and the receipt time now unless given.
    public init(
        accessToken: Secret, tokenType: String = "Bearer", refreshToken: Secret? = nil, idToken: Secret? = nil,
        expiresAt: Date? = nil, scopes: [String] = [], receivedAt: Date = Date(), authorizationDetails: AuthorizationDetails? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.receivedAt = receivedAt
        self.authorizationDetails = authorizationDetails
    }

    /// Whether the access token has expired at `now`, or will within `margin` seconds. A token
    /// without a known expiry never counts as expired (a 401 will tell).
    public func isExpired(at now: Date = Date(), margin: TimeInterval = 0) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= margin
    }

    /// Whether the access token should be refreshed before use at `now`: it has expired, or expires
    /// within `margin` seconds, where the margin is at most half the token's lifetime (so a token that
    /// lives 30 s is used for 15 s, not refreshed on every call).
    public func needsRefresh(at now: Date = Date(), margin: TimeInterval) -> Bool {
        guard let expiresAt else { return false }
        let lifetime = expiresAt.timeIntervalSince(receivedAt)
        let effective = lifetime > 0 ? min(margin, lifetime / 2) : margin
        return expiresAt.timeIntervalSince(now) <= effective
    }

    /// The set after a refresh answered with `response`: the new access token and expiry; the new
    /// refresh token when the provider rotated it, else the old one (RFC 6749 §6); the new ID token
    /// when one came, else the old one; the new scope when the response named one.
    package func refreshed(with response: TokenSet) -> TokenSet {
        var result = response
        if result.refreshToken == nil { result.refreshToken = refreshToken }
        if result.idToken == nil { result.idToken = idToken }
        if result.scopes.isEmpty { result.scopes = scopes }
        // RFC 9396 §7: a refresh that names none keeps what was granted.
        if result.authorizationDetails == nil { result.authorizationDetails = authorizationDetails }
        return result
    }
}

extension TokenSet: CustomStringConvertible {
    /// The token type, expiry and scopes; each token shows as `<redacted>` (or `none` when absent).
    /// The scope values and the token type are the provider's text, kept as it was sent: here each
    /// shows sanitized (a control, format or separator character as `?`, each value bounded), so
    /// printing a token set can neither drive a terminal nor forge a log line.
    public var description: String {
        var parts = ["accessToken: <redacted>", "tokenType: \(UntrustedText.sanitized(tokenType, limit: 32))"]
        parts.append("refreshToken: \(refreshToken == nil ? "none" : "<redacted>")")
        parts.append("idToken: \(idToken == nil ? "none" : "<redacted>")")
        if let expiresAt { parts.append("expiresAt: \(expiresAt.formatted(.iso8601))") }
        if !scopes.isEmpty { parts.append("scopes: \(Self.printable(scopes))") }
        return "TokenSet(\(parts.joined(separator: ", ")))"
    }

    /// The scope values for a terminal or a log line, space-separated: each one sanitized and
    /// bounded like any other text from a provider (review 3, L3). The values themselves are kept
    /// as the provider sent them: the grant is the provider's word, and a value outside RFC 6749
    /// §3.3's characters is odd but harmless until it is shown.
    package static func printable(_ scopes: [String]) -> String {
        scopes.map { UntrustedText.sanitized($0, limit: 200) }.joined(separator: " ")
    }
}
