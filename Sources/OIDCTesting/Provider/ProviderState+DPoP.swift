internal import Foundation
internal import OIDC

/// What the provider remembers of DPoP (RFC 9449): the current nonce and its uses, the `jti`s of
/// accepted proofs until they are too old to be accepted anyway, and the proofs each endpoint judged.
struct DPoPLedger: Sendable {
    var nonce: String?
    var nonceUses = 0
    /// `jti` of every accepted proof, with the time after which its `iat` is refused anyway.
    var proofIDs: [String: Date] = [:]
    /// The same `jti`s in the order they were accepted (from `oldestProofID` on), so that the
    /// expired and the oldest are forgotten without a scan of them all.
    var proofIDOrder: [(jti: String, expiry: Date)] = []
    var oldestProofID = 0
    var received: [TestProvider.Endpoint: [TestProvider.ReceivedDPoPProof]] = [:]

    /// More `jti`s than this and the oldest are forgotten first (their proofs are nearly too old).
    static let maximumRememberedProofIDs = 10_000
}

extension ProviderState {
    var currentDPoPNonce: String? { dpop.nonce }

    func dpopProofs(_ endpoint: TestProvider.Endpoint) -> [TestProvider.ReceivedDPoPProof] { dpop.received[endpoint] ?? [] }

    func recordDPoPProof(_ proof: TestProvider.ReceivedDPoPProof, at endpoint: TestProvider.Endpoint) {
        dpop.received[endpoint, default: []].append(proof)
    }

    /// A new nonce, replacing the current one.
    @discardableResult
    func rotateDPoPNonce() throws(OAuthError) -> String {
        let nonce = try Self.randomToken()
        dpop.nonce = nonce
        dpop.nonceUses = 0
        return nonce
    }

    /// The last steps of RFC 9449 §4.3, in one step of the actor: the nonce (when `nonceRequired`:
    /// the current one, else `use_dpop_nonce` with it), then the `jti` (never seen before while its
    /// proof could be accepted), then the nonce's use counted. Returns the nonce to announce when
    /// this use rotated it.
    func acceptDPoPProof(id jti: String, rememberedUntil expiry: Date, nonce presented: String?, nonceRequired: Bool) throws(DPoPRefusal) -> String? {
        if nonceRequired {
            var current = dpop.nonce ?? ""
            if dpop.nonce == nil {
                do throws(OAuthError) { current = try rotateDPoPNonce() } catch { throw DPoPRefusal(oauth: error) }
            }
            guard let presented, ConstantTime.equals(presented, current) else {
                throw DPoPRefusal.useNonce(
                    presented == nil ? "The DPoP proof needs the nonce in DPoP-Nonce." : "The DPoP proof's nonce is not the current one.",
                    nonce: current
                )
            }
        }
        let now = self.now
        forgetProofIDs(before: now)
        if let seen = dpop.proofIDs[jti], seen > now {
            throw DPoPRefusal.invalidProof("The DPoP proof's jti was used before: a proof is good for one request.")
        }
        dpop.proofIDs[jti] = expiry
        dpop.proofIDOrder.append((jti, expiry))
        guard nonceRequired, let limit = configuration.dpop.nonces.rotateAfterUses else { return nil }
        dpop.nonceUses += 1
        guard dpop.nonceUses >= limit else { return nil }
        do throws(OAuthError) { return try rotateDPoPNonce() } catch { throw DPoPRefusal(oauth: error) }
    }
}

extension ProviderState {
    /// Forgets, oldest first, the `jti`s whose proofs are too old to be accepted anyway, and the
    /// oldest beyond ``DPoPLedger/maximumRememberedProofIDs``: amortized constant time a proof.
    private func forgetProofIDs(before now: Date) {
        while dpop.oldestProofID < dpop.proofIDOrder.count {
            let (jti, expiry) = dpop.proofIDOrder[dpop.oldestProofID]
            // A slot whose jti was accepted again since (a later slot holds it) is only passed over.
            guard dpop.proofIDs[jti] == expiry else {
                dpop.oldestProofID += 1
                continue
            }
            guard dpop.proofIDs.count >= DPoPLedger.maximumRememberedProofIDs || expiry <= now else { break }
            dpop.proofIDs[jti] = nil
            dpop.oldestProofID += 1
        }
        if dpop.oldestProofID > 1_024, dpop.oldestProofID * 2 > dpop.proofIDOrder.count {
            dpop.proofIDOrder.removeFirst(dpop.oldestProofID)
            dpop.oldestProofID = 0
        }
    }
}

/// Why a DPoP proof was refused (RFC 9449 §5, §7.1, §8, §9): `invalid_dpop_proof`, or
/// `use_dpop_nonce` with the nonce to use; the token endpoint answers 400 with it, a resource 401.
struct DPoPRefusal: Error, Sendable {
    var code: String
    var description: String
    /// The current nonce, sent in `DPoP-Nonce`.
    var nonce: String?
    /// 500 for the provider's own failure; the endpoint's status otherwise.
    var serverFailure = false

    static func invalidProof(_ description: String) -> DPoPRefusal {
        DPoPRefusal(code: "invalid_dpop_proof", description: description)
    }

    static func useNonce(_ description: String, nonce: String) -> DPoPRefusal {
        DPoPRefusal(code: "use_dpop_nonce", description: description, nonce: nonce)
    }

    init(code: String, description: String, nonce: String? = nil) {
        self.code = code
        self.description = description
        self.nonce = nonce
    }

    init(oauth error: OAuthError) {
        self.init(code: error.code, description: error.description ?? "The provider failed.")
        serverFailure = error.status >= 500
    }

    /// `DPoP-Nonce: …` when a nonce goes with the refusal.
    var headers: [(name: String, value: String)] { nonce.map { [("DPoP-Nonce", $0)] } ?? [] }

    /// The token endpoint's answer (§5, §8): 400 and an RFC 6749 §5.2 body.
    var tokenEndpointResponse: ProviderResponse {
        .oauthError(OAuthError(code: code, description: description, status: serverFailure ? 500 : 400), extraHeaders: headers)
    }
}

extension OAuthError {
    static func invalidDPoPProof(_ description: String) -> OAuthError { OAuthError(code: "invalid_dpop_proof", description: description) }
}
