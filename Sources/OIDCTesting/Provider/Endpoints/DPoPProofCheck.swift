internal import Foundation
internal import OIDC
internal import OIDCResourceServer

/// A DPoP proof checked as RFC 9449 §4.3 asks: one `DPoP` header holding a compact JWS with `typ`
/// `dpop+jwt`, an accepted asymmetric `alg` and a public `jwk` that verifies it; claims `jti`,
/// `htm` (the method), `htu` (this endpoint's URL, compared after normalization, without query and
/// fragment), `iat` within the window, `nonce` when required, and at a resource `ath` (the access
/// token's hash) and a key that is the one the token is bound to. A `jti` seen before is a replay.
/// Every proof checked is recorded with its outcome.
enum DPoPProofCheck {
    /// What an accepted proof tells the endpoint.
    struct Accepted: Sendable {
        /// RFC 7638 thumbprint of the proof's key: the `jkt` to bind to, or to compare with.
        var thumbprint: String
        /// A new nonce to announce in `DPoP-Nonce`, when this proof's use rotated it.
        var nextNonce: String?

        var headers: [(name: String, value: String)] { nextNonce.map { [("DPoP-Nonce", $0)] } ?? [] }
    }

    /// The proof of `request`, checked for `endpoint`; `nil` when the request carries no `DPoP` header.
    ///
    /// - Parameters:
    ///   - accessToken: the token sent with the proof to a resource: `ath` must be its hash.
    ///   - boundKey: the `jkt` the presented token is bound to: the proof's key must be that one.
    static func check(
        _ request: ProviderRequest, endpoint: TestProvider.Endpoint, accessToken: String? = nil, boundKey: String? = nil,
        _ context: ProviderContext
    ) async throws(DPoPRefusal) -> Accepted? {
        let values = request.headerValues("DPoP")
        guard let compact = values.first else { return nil }
        var thumbprint: String?
        let now = await context.state.now
        do throws(DPoPRefusal) {
            guard values.count == 1 else { throw DPoPRefusal.invalidProof("A request carries at most one DPoP header.") }
            let proof = try verify(compact, request: request, now: now, context)
            thumbprint = proof.thumbprint
            if let accessToken {
                do throws(DPoPProofError) { try proof.checkAccessToken(accessToken) } catch { throw DPoPRefusal.invalidProof(error.message) }
            }
            if let boundKey, !ConstantTime.equals(boundKey, proof.thumbprint) {
                throw DPoPRefusal.invalidProof("The DPoP proof is signed by another key than the one the token is bound to.")
            }
            let policy = context.configuration.dpop
            let expiry = proof.issuedAt.addingTimeInterval(Double(policy.maximumProofAge + policy.clockLeeway))
            let nextNonce = try await context.state.acceptDPoPProof(
                id: proof.identifier, rememberedUntil: expiry, nonce: proof.nonce,
                nonceRequired: policy.nonces.requiredAt.contains(endpoint)
            )
            await record(compact, thumbprint: thumbprint, error: nil, endpoint, context)
            return Accepted(thumbprint: proof.thumbprint, nextNonce: nextNonce)
        } catch {
            await record(compact, thumbprint: thumbprint, error: error.code, endpoint, context)
            throw error
        }
    }

    /// RFC 9449 §4.3 through `OIDCResourceServer`'s verifier (the one implementation): everything
    /// but the nonce and the `jti`, which the provider's state judges. `htu` is compared with this
    /// endpoint's URL at the provider's origin.
    private static func verify(
        _ compact: String, request: ProviderRequest, now: Date, _ context: ProviderContext
    ) throws(DPoPRefusal) -> DPoPProof {
        let policy = context.configuration.dpop
        let verifier = DPoPProofVerifier(
            algorithms: Set(policy.algorithms), maximumAge: TimeInterval(policy.maximumProofAge),
            leeway: TimeInterval(policy.clockLeeway), maximumLength: 16 * 1024
        )
        let origin = String(context.issuer.dropLast(context.configuration.issuerPath.count))
        do throws(DPoPProofError) {
            return try verifier.verify(compact, method: request.method, url: origin + request.path, now: now)
        } catch {
            throw .invalidProof(error.message)
        }
    }

    private static func record(_ compact: String, thumbprint: String?, error: String?, _ endpoint: TestProvider.Endpoint, _ context: ProviderContext) async {
        var header: [String: JSONValue] = [:]
        var claims: [String: JSONValue] = [:]
        if let jws = try? ParsedJWS(compact, maximumLength: 16 * 1024) {
            header = jws.header
            claims = (try? StrictJSONParser.parseObject(jws.payload)) ?? [:]
        }
        let proof = TestProvider.ReceivedDPoPProof(compact: compact, header: header, claims: claims, thumbprint: thumbprint, error: error)
        await context.state.recordDPoPProof(proof, at: endpoint)
    }
}
