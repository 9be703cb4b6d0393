extension AccessRefusal {
    /// The rule a request broke: one name for each check, stable across releases, for logs,
    /// metrics and tests (`refusal.rule == .audienceMismatch`).
    ///
    /// New rules may be added in later releases; match the ones you care about and treat the
    /// others alike.
    public struct Rule: Hashable, Sendable, CustomStringConvertible {
        /// The rule's name, such as `audience_mismatch`.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// The rule's name.
        public var description: String { name }

        // MARK: The request's credentials (RFC 6750 §2, §3.1; RFC 9449 §7)

        /// No access token came (no `Authorization` header, or one with a scheme this resource does
        /// not take): RFC 6750 §3.1 says the challenge then carries no error code.
        public static let missingToken = Rule("missing_token")
        /// The `Authorization` header is not `scheme SP token68`, or the token has characters a
        /// token cannot have (RFC 6750 §2.1, RFC 9449 §7.1).
        public static let malformedAuthorization = Rule("malformed_authorization")
        /// More than one `Authorization` header.
        public static let duplicateAuthorization = Rule("duplicate_authorization")
        /// More than one `DPoP` header (RFC 9449 §4.3 step 1).
        public static let duplicateProof = Rule("duplicate_dpop_proof")
        /// A token in the `Authorization` header and in the URL's `access_token` too (RFC 6750 §2).
        public static let tokenInTwoPlaces = Rule("token_in_two_places")
        /// A token in the URL's query (`access_token`): it leaks into logs and `Referer`; this
        /// resource takes tokens in the `Authorization` header only (RFC 9700 §2.4 and RFC 6750 §2.3).
        public static let tokenInQuery = Rule("token_in_query")
        /// The request target is neither a path nor an absolute URL of this resource (another
        /// host's, the asterisk or authority form, a fragment, a byte outside visible ASCII).
        public static let malformedRequestTarget = Rule("malformed_request_target")
        /// No `Host` (without a public origin), more than one, or one that is not `host[:port]`
        /// (RFC 9112 §3.2).
        public static let malformedHost = Rule("malformed_host")
        /// A token longer than the configured maximum.
        public static let tokenTooLong = Rule("token_too_long")

        // MARK: JWT access tokens (RFC 9068 §4, RFC 8725)

        /// The token is not a well-formed compact JWS with a JSON object of claims (strict: no
        /// duplicate members, bounded nesting and size); the message says what is wrong.
        public static let malformedToken = Rule("malformed_token")
        /// The token's header lists in `crit` an extension this resource does not implement, so
        /// it must be refused (RFC 7515 §4.1.11).
        public static let unsupportedCriticalHeader = Rule("unsupported_crit")
        /// The header's `typ` is not `at+jwt` (and untyped tokens were not allowed).
        public static let untypedToken = Rule("untyped_token")
        /// The token is another kind of JWT: an ID token, a logout token, a DPoP proof, a security
        /// event (RFC 8725 §3.11).
        public static let wrongTokenType = Rule("wrong_token_type")
        /// The token's `alg` is not among the accepted asymmetric algorithms.
        public static let algorithmNotAllowed = Rule("algorithm_not_allowed")
        /// The token's `iss` is not one of the trusted issuers (compared exactly).
        public static let untrustedIssuer = Rule("untrusted_issuer")
        /// No key of the issuer's JWKS fits the token's `alg` and `kid` (or several do).
        public static let unknownKey = Rule("unknown_key")
        /// The signature does not verify.
        public static let invalidSignature = Rule("invalid_signature")
        /// `aud` does not contain this resource's identifier.
        public static let audienceMismatch = Rule("audience_mismatch")
        /// `exp` has passed (beyond the leeway).
        public static let tokenExpired = Rule("token_expired")
        /// `nbf` or `iat` lies in the future (beyond the leeway).
        public static let tokenNotYetValid = Rule("token_not_yet_valid")
        /// A required claim is missing or has the wrong type.
        public static let invalidClaim = Rule("invalid_claim")

        // MARK: Opaque tokens (RFC 7662)

        /// The authorization server says the token is not active.
        public static let inactiveToken = Rule("inactive_token")
        /// The token is not a JWT and no introspection is configured.
        public static let opaqueTokenNotAccepted = Rule("opaque_token_not_accepted")

        // MARK: Scopes (RFC 6750 §3.1)

        /// The token lacks a scope the route requires: 403 `insufficient_scope`.
        public static let insufficientScope = Rule("insufficient_scope")

        /// The token grants no rich authorization detail (RFC 9396) of a type the route requires:
        /// 403 `insufficient_scope`.
        public static let missingAuthorizationDetail = Rule("missing_authorization_detail")

        // MARK: Step-up authentication (RFC 9470)

        /// The user's authentication behind the token is not the kind the route requires (`acr`),
        /// or is older than it allows (`auth_time`, or none with a maximum age): 401
        /// `insufficient_user_authentication`, the challenge naming `acr_values` and `max_age`.
        public static let insufficientUserAuthentication = Rule("insufficient_user_authentication")

        // MARK: Sender constraints (RFC 9449 §7, RFC 8705 §3)

        /// A DPoP-bound token (`cnf.jkt`) came as a bearer token.
        public static let boundTokenAsBearer = Rule("bound_token_as_bearer")
        /// The token is bound (`cnf`, RFC 7800) by a method this resource cannot check: a member
        /// other than `jkt` (RFC 9449) and `x5t#S256` (RFC 8705), such as `jwk`, `kid`, `jku` or
        /// `x5t`. Refused, never taken as a bearer token. (A `cnf` that is not an object is
        /// ``invalidClaim``.)
        public static let unsupportedConfirmation = Rule("unsupported_cnf")
        /// A token without `cnf.jkt` came under the `DPoP` scheme.
        public static let unboundTokenAsDPoP = Rule("unbound_token_as_dpop")
        /// This resource takes DPoP-bound tokens only, and a bearer token came.
        public static let dpopRequired = Rule("dpop_required")
        /// This resource does not take DPoP (its policy is off), and a DPoP token came: a 401 with
        /// the Bearer challenge and no error code, as for a scheme it does not know (RFC 6750 §3.1).
        public static let dpopNotAccepted = Rule("dpop_not_accepted")
        /// A `DPoP` header came with a bearer token.
        public static let proofWithBearerToken = Rule("proof_with_bearer_token")
        /// A DPoP-bound token came without its proof.
        public static let missingProof = Rule("missing_dpop_proof")
        /// The DPoP proof broke a rule of RFC 9449 §4.3 (the message says which).
        public static let invalidProof = Rule("invalid_dpop_proof")
        /// The DPoP proof's `jti` was used before.
        public static let replayedProof = Rule("replayed_dpop_proof")
        /// The DPoP proof is signed by another key than the one the token is bound to (`cnf.jkt`).
        public static let proofKeyMismatch = Rule("dpop_key_mismatch")
        /// The DPoP proof's `ath` is not the hash of the token sent with it.
        public static let accessTokenHashMismatch = Rule("ath_mismatch")
        /// The DPoP proof carries no nonce, or an old or unknown one: `use_dpop_nonce` with a fresh one.
        public static let nonceRequired = Rule("use_dpop_nonce")
        /// The token is bound to a client certificate (`cnf["x5t#S256"]`) the connection did not present.
        public static let certificateMismatch = Rule("certificate_mismatch")

        // MARK: This server's own failures (503, never a challenge)

        /// The issuer's keys could not be fetched.
        public static let keysUnavailable = Rule("keys_unavailable")
        /// The introspection endpoint could not be asked, or its answer was unusable.
        public static let introspectionUnavailable = Rule("introspection_unavailable")
        /// The replay store could not answer.
        public static let replayStoreUnavailable = Rule("replay_store_unavailable")
        /// The replay store holds its quota of proofs for the proof's key (one client sends
        /// proofs faster than ``InMemoryReplayStore/perKeyLimit`` allows); other keys' proofs are
        /// still taken.
        public static let replayQuotaExceeded = Rule("replay_quota_exceeded")
    }
}
