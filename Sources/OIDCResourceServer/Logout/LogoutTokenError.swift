/// A logout token was refused: the rule it broke (OIDC Back-Channel Logout 1.0 §2.4, §2.6), in
/// words that never quote the token.
public struct LogoutTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule a logout token broke.
    public enum Rule: String, Sendable, Equatable, CaseIterable {
        /// The request carried no `logout_token` (or two), or was not a form body (§2.5).
        case missingToken = "missing_token"
        /// Not a well-formed compact JWS with a JSON object as claims (§2.6 step 1), or too large.
        case malformed
        /// `alg` is `none`, symmetric or not among the allowed algorithms (§2.6 step 2).
        case algorithm
        /// `typ` is present and is not `logout+jwt` (§2.4, RFC 8725 §3.11).
        case type
        /// No key of the issuer's JWKS matches the header's `kid` and `alg`.
        case key
        /// The signature does not verify with the issuer's key (§2.6 step 2).
        case signature
        /// `iss` is missing or is not exactly the expected issuer (§2.6 step 3).
        case issuer
        /// `aud` is missing or does not contain the client id (§2.6 step 3).
        case audience
        /// `iat` is missing, in the future beyond the leeway, or older than the accepted age (§2.6 step 3).
        case issuedAt = "iat"
        /// `exp` is present and has passed (beyond the leeway), or is not a date (§2.6 step 3).
        case expired
        /// `events` is missing, not an object, or lacks the back-channel logout event, whose value
        /// must be a JSON object (§2.4, §2.6 step 5).
        case events
        /// Neither `sub` nor `sid` is present, or one is not a non-empty string (§2.4, §2.6 step 4).
        case subjectOrSession = "sub_or_sid"
        /// A `nonce` claim is present: an ID token, not a logout token (§2.4, §2.6 step 6).
        case nonce
        /// `jti` is missing or not a non-empty string (§2.4).
        case jti
        /// The same `jti` from the same issuer was accepted before (§2.6 step 7).
        case replayed
        /// The issuer's keys could not be fetched, or the replay store could not answer: the token
        /// is refused, never let through; the provider may send it again later.
        case unavailable
    }

    /// The rule the token broke.
    public let rule: Rule
    /// What was wrong, without the token or any of its claims' values.
    public let message: String

    /// An error for `rule`, saying `message`.
    public init(_ rule: Rule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    /// "Logout token refused (rule): message", never the token.
    public var description: String { "Logout token refused (\(rule.rawValue)): \(message)" }
}
