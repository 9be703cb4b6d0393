public import Foundation
public import OIDC

extension ResourceServer {
    /// How a resource server checks tokens. Secure by default: typed (`at+jwt`) tokens only,
    /// asymmetric algorithms only, DPoP allowed (proofs checked whenever a token is bound),
    /// a 60-second leeway, proofs up to 60 seconds old, `jti`s remembered in memory.
    public struct Configuration: Sendable {
        /// The resource's identifier (RFC 9728 §1.2; RFC 8707): a URL with `https` (or `http` on
        /// loopback), no query, no fragment, such as `https://api.example/orders`. It names the
        /// metadata document's place and is the default accepted audience.
        public var resource: URL
        /// The `aud` values that mean this resource: a token's `aud` must contain one of them.
        /// By default the identifier given to ``init(resource:issuers:)``, as written.
        public var audiences: Set<String>
        /// The authorization servers whose JWT access tokens are verified here, each with its keys.
        public var issuers: [TrustedIssuer]
        /// The algorithms an access token may be signed with: asymmetric ones only (RFC 9068 §4:
        /// no `none`, no HMAC, which would need a secret the resource shares with every other).
        public var algorithms: Set<JWSAlgorithm> = JWSAlgorithm.asymmetric
        /// Accept JWT access tokens without `typ` `at+jwt` (`typ` absent or `JWT`): for providers
        /// that do not type them. Off by default; even on, a token typed as another kind of JWT
        /// (an ID token's `JWT` with a `nonce`, `logout+jwt`, `dpop+jwt`, …) is refused.
        public var acceptsUntypedTokens = false
        /// The claims a JWT access token must carry besides `iss`, `aud` and `exp` (always
        /// required): by default RFC 9068 §2.2's `sub`, `client_id`, `iat` and `jti`.
        public var requiredClaims: Set<String> = ["sub", "client_id", "iat", "jti"]
        /// Tolerance for clock differences on `exp`, `nbf`, `iat` and a proof's `iat`, in seconds.
        public var leeway: TimeInterval = 60
        /// The longest token accepted, in bytes (16 KiB by default).
        public var maximumTokenLength = 16_384
        /// DPoP (RFC 9449): whether it is taken, required, and how proofs are checked.
        public var dpop = DPoPSettings()
        /// Opaque tokens: introspection (RFC 7662), when configured. Tokens that are not JWTs, or
        /// all tokens when ``issuers`` is empty, are introspected.
        public var introspection: IntrospectionSettings?
        /// Where accepted proofs' `jti`s are remembered: in memory by default; give a fleet of
        /// instances one shared store (such as `PostgresReplayStore`). Each claim passes ``now``
        /// (``ReplayStore/claim(_:until:now:)``), so the store judges expiries by this
        /// configuration's clock; a store with a clock of its own (for its purges) should be given
        /// the same one.
        public var replayStore: any ReplayStore = InMemoryReplayStore()
        /// The URL of this resource's RFC 9728 metadata, named in every challenge's
        /// `resource_metadata` (RFC 9728 §5.1); by default the well-known URL derived from the
        /// resource given to ``init(resource:issuers:)`` (set it again after changing ``resource``).
        /// `nil` leaves the parameter out.
        public var metadataURL: URL?
        /// Where clients reach this API, when that is not what a request's `Host` says: a server
        /// behind a proxy or load balancer (`https://api.example`). An origin: scheme, host and
        /// port, no path. ``ResourceServer/request(method:target:authority:headers:scheme:peerCertificate:)``
        /// then builds every addressed URL (a DPoP proof's `htu`) on it; `nil`: on the connection's
        /// scheme and the request's one `Host`. `Forwarded` and `X-Forwarded-*` are never read.
        public var publicOrigin: URL?
        /// The scopes this resource knows, for the metadata's `scopes_supported`.
        public var scopesSupported: [String] = []
        /// The clock; the system's by default.
        public var now: @Sendable () -> Date = { Date() }

        /// A configuration for `resource` that trusts `issuers`; everything else by default.
        public init(resource: URL, issuers: [TrustedIssuer]) {
            self.resource = resource
            self.issuers = issuers
            self.audiences = [resource.absoluteString]
            self.metadataURL = ProtectedResourceMetadata.wellKnownURL(for: resource)
        }
    }

    /// DPoP at this resource (RFC 9449).
    public struct DPoPSettings: Sendable {
        /// Whether DPoP is taken.
        public enum Mode: String, Sendable, CaseIterable {
            /// Bearer tokens only; a DPoP-bound token is refused (it cannot be checked here).
            case off
            /// Bearer and DPoP-bound tokens, each under its own scheme.
            case allowed
            /// DPoP-bound tokens only (the metadata says `dpop_bound_access_tokens_required`).
            case required
        }

        /// Whether DPoP is taken: ``Mode/allowed`` by default.
        public var mode: Mode = .allowed
        /// The algorithms a proof may be signed with; the challenge names them in `algs`.
        public var algorithms: Set<JWSAlgorithm> = [.es256, .es384, .es512, .ps256, .ps384, .ps512, .rs256, .rs384, .rs512, .edDSA, .ed25519]
        /// How old a proof may be, by its `iat`, in seconds (60 by default); its `jti` is
        /// remembered that long plus the leeway.
        public var maximumProofAge: TimeInterval = 60
        /// The clock skew allowed on a proof's `iat`, in seconds (5 by default): a proof is taken
        /// from `maximumProofAge + proofLeeway` seconds old to `proofLeeway` seconds ahead. Kept
        /// apart from the tokens' ``Configuration/leeway``: a proof is made for this request, just
        /// now, by the client's own clock, and a wider window lets a captured proof live longer.
        public var proofLeeway: TimeInterval = 5
        /// Server nonces (RFC 9449 §8), when set: every proof must carry a current one.
        public var nonces: DPoPServerNonces?
        /// The longest proof accepted, in bytes (8 KiB by default).
        public var maximumProofLength = 8_192

        /// DPoP allowed, with the defaults.
        public init(mode: Mode = .allowed) { self.mode = mode }
    }
}
