public import OIDC

extension TestProvider {
    /// DPoP (RFC 9449): sender-constrained tokens bound to a key the client proves it holds, with a
    /// proof JWT in a `DPoP` header on every token request and every request with a bound token.
    ///
    /// By default DPoP is accepted without nonces: a token request with a valid proof gets a token
    /// bound to the proof's key (`token_type: "DPoP"`, `cnf.jkt` at introspection), one without gets a
    /// bearer token.
    ///
    /// ```swift
    /// var configuration = TestProvider.Configuration()
    /// configuration.dpop = .init(support: .required, nonces: .required(rotatingAfter: 3))
    /// ```
    public struct DPoP: Sendable, Equatable {
        /// Whether the token endpoint takes proofs, and whether it takes anything else.
        public var support: Support
        /// Where proofs must carry a provider-supplied nonce (RFC 9449 §8, §9), and how often it changes.
        public var nonces: Nonces
        /// The proof algorithms accepted, advertised as `dpop_signing_alg_values_supported` and in the
        /// `algs` of resource challenges. Asymmetric only; by default every one the library verifies.
        public var algorithms: [JWSAlgorithm]
        /// How old a proof's `iat` may be, in seconds of the provider's clock (60 by default); its
        /// `jti` is remembered this long (plus ``clockLeeway``) and refused as a replay meanwhile.
        public var maximumProofAge: Int
        /// How far a proof's `iat` may lie ahead of the provider's clock, and be late beyond
        /// ``maximumProofAge``, in seconds (5 by default).
        public var clockLeeway: Int

        /// A DPoP policy; each parameter's default is the one its property names.
        public init(
            support: Support = .accepted,
            nonces: Nonces = .off,
            algorithms: [JWSAlgorithm] = [.es256, .es384, .es512, .ps256, .ps384, .ps512, .edDSA, .ed25519, .rs256, .rs384, .rs512],
            maximumProofAge: Int = 60,
            clockLeeway: Int = 5
        ) {
            self.support = support
            self.nonces = nonces
            self.algorithms = algorithms
            self.maximumProofAge = maximumProofAge
            self.clockLeeway = clockLeeway
        }

        /// Proofs are required at the token endpoint: every token is bound.
        public static let required = DPoP(support: .required)

        /// Whether the provider speaks DPoP.
        public enum Support: Sendable, Equatable {
            /// No DPoP: `DPoP` headers are ignored, tokens are bearer tokens, discovery names no DPoP
            /// algorithms (a provider from before RFC 9449).
            case notOffered
            /// A token request with a valid proof gets a bound token; one without gets a bearer token.
            /// The default.
            case accepted
            /// A token request without a proof is refused with `400 invalid_dpop_proof`; a missing
            /// token at the protected resource is challenged with the `DPoP` scheme.
            case required
        }

        /// DPoP nonces (RFC 9449 §8 at the authorization server, §9 at resource servers). The provider
        /// keeps one current nonce for its whole origin, as clients keep one per origin: a proof
        /// to an endpoint in ``requiredAt`` without it, or with an older one, is refused with
        /// `use_dpop_nonce` and a `DPoP-Nonce` header holding the current one.
        public struct Nonces: Sendable, Equatable {
            /// The endpoints whose proofs must carry the current nonce: any of ``Endpoint/token``,
            /// ``Endpoint/pushedAuthorization``, ``Endpoint/userinfo`` and ``Endpoint/protectedResource``.
            public var requiredAt: Set<Endpoint>
            /// After how many accepted proofs with the current nonce a new one replaces it; the response
            /// to the last of them (a 200 too) carries the new one in `DPoP-Nonce`, and the old one is
            /// refused from then on. `nil`: the nonce never changes (unless
            /// ``TestProvider/rotateDPoPNonce()``).
            public var rotateAfterUses: Int?

            /// Nonces at `requiredAt`, rotating after `rotateAfterUses` uses when given.
            public init(requiredAt: Set<Endpoint>, rotateAfterUses: Int? = nil) {
                self.requiredAt = requiredAt
                self.rotateAfterUses = rotateAfterUses
            }

            /// No nonces anywhere: the default.
            public static let off = Nonces(requiredAt: [])

            /// Nonces at the token endpoint and the protected resource (and, when listed, the userinfo
            /// and pushed authorization endpoints), rotating after `uses` accepted proofs when given.
            public static func required(
                at endpoints: Set<Endpoint> = [.token, .protectedResource], rotatingAfter uses: Int? = nil
            ) -> Nonces {
                Nonces(requiredAt: endpoints, rotateAfterUses: uses)
            }

            /// The endpoints that check DPoP proofs.
            static let checkingEndpoints: Set<Endpoint> = [.token, .pushedAuthorization, .userinfo, .protectedResource]
        }

        /// Refuses a policy the provider cannot honour.
        func validate() throws(OIDCError) {
            guard !algorithms.isEmpty, algorithms.allSatisfy({ !$0.isHMACAlgorithm }) else {
                throw OIDCError(.invalidArgument, "DPoP proof algorithms must be asymmetric, and at least one.")
            }
            guard maximumProofAge > 0, clockLeeway >= 0, (nonces.rotateAfterUses ?? 1) > 0 else {
                throw OIDCError(.invalidArgument, "The DPoP proof age and nonce rotation must be positive, the leeway not negative.")
            }
            guard nonces.requiredAt.isSubset(of: Nonces.checkingEndpoints) else {
                throw OIDCError(
                    .invalidArgument, "DPoP nonces can be required only at the token, pushed authorization, userinfo and protected resource endpoints."
                )
            }
        }
    }

    /// A DPoP proof as the provider received and judged it, for tests to inspect
    /// (``TestProvider/dpopProofs(_:)``). A proof is not a secret: it carries `ath`, a hash of the
    /// access token, never the token.
    public struct ReceivedDPoPProof: Sendable, Equatable {
        /// The `DPoP` header's value, as received.
        public let compact: String
        /// The JOSE header (`typ`, `alg`, `jwk`), decoded without verification; empty when it did not decode.
        public let header: [String: JSONValue]
        /// The claims (`jti`, `htm`, `htu`, `iat`, `ath`, `nonce`), decoded without verification;
        /// empty when they did not decode.
        public let claims: [String: JSONValue]
        /// The RFC 7638 thumbprint of the header's `jwk`, when it is a public key the provider takes.
        public let thumbprint: String?
        /// The error the proof was refused with (`use_dpop_nonce`, `invalid_dpop_proof`), or `nil` when
        /// it passed every check of RFC 9449 §4.3. A request whose proof passed can still fail for
        /// other reasons, such as a wrong code.
        public let error: String?

        /// Whether the proof passed every check.
        public var isAccepted: Bool { error == nil }
    }

    /// Every DPoP proof `endpoint` checked (the token, pushed authorization, userinfo and protected
    /// resource endpoints), oldest first, with its outcome: a nonce challenge and its retry show as
    /// two proofs, the first with error `use_dpop_nonce`. Faulted requests never reach the check.
    /// ``resetCounters()`` forgets them.
    public func dpopProofs(_ endpoint: Endpoint) async -> [ReceivedDPoPProof] {
        await state.dpopProofs(endpoint)
    }

    /// The current DPoP nonce, or `nil` before the provider first handed one out.
    public func dpopNonce() async -> String? {
        await state.currentDPoPNonce
    }

    /// Replaces the DPoP nonce now, as a provider does on its own schedule: proofs with the old one
    /// are challenged with `use_dpop_nonce` from now on.
    public func rotateDPoPNonce() async throws {
        do { _ = try await state.rotateDPoPNonce() } catch {
            throw OIDCError(.cryptoFailure, "The provider could not draw a new nonce.")
        }
    }
}
