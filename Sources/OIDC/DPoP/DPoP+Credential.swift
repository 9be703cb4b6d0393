internal import Foundation
internal import Logging

extension DPoP {
    /// Puts a request's credential in `headers`: the access token, if it carries one, as
    /// `Authorization: Bearer` (RFC 6750 §2.1), or `Authorization: DPoP` when `proofs` is given
    /// (RFC 9449 §7.1); and with `proofs`, a fresh proof of `method` and `url` with the origin's
    /// latest nonce, and the token's hash (`ath`) when a token goes. The one place either pipeline
    /// writes these headers.
    ///
    /// - Returns: the proof, for the call's redaction; `nil` without `proofs`.
    /// - Throws: what ``DPoPKey/proof(method:url:accessToken:nonce:now:)`` throws.
    static func present(
        accessToken: Secret?, proofs: DPoP?, method: String, url: URL, headers: inout HTTPHeaders
    ) throws(OIDCError) -> String? {
        if let accessToken { headers.set("Authorization", (proofs == nil ? "Bearer " : "DPoP ") + accessToken.revealedValue) }
        guard let proofs else { return nil }
        let proof = try proofs.key.proof(method: method, url: url, accessToken: accessToken, nonce: proofs.nonces.nonce(for: url), now: proofs.now())
        headers.set("DPoP", proof)
        return proof
    }
}

/// The provider pipeline's credential: userinfo's access token, and for a client that binds its
/// tokens with DPoP (``TokenClient/dpop``), a fresh proof on each request of a call that carries
/// one (token and pushed authorization requests, userinfo).
struct ProviderCredentialStage: ProviderStage {
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse {
        let proofs = request.call.carriesProof ? request.client.dpop : nil
        let accessToken = request.call.carriesAccessToken ? request.accessToken : nil
        guard proofs != nil || accessToken != nil else { return try await next(request) }
        var request = request
        // A provider that echoes the proof in its error text must not put it in ours.
        if let proof = try DPoP.present(accessToken: accessToken, proofs: proofs, method: request.method, url: request.url, headers: &request.headers) {
            request.exchange.sent([proof])
        }
        return try await next(request)
    }
}

/// The provider pipeline's DPoP nonce retry (RFC 9449 §8): every answer's `DPoP-Nonce` is kept; a
/// `use_dpop_nonce` challenge with a new nonce gets one retry, through the stages after this one
/// again (a fresh client assertion, a fresh proof with the nonce). The code or refresh token the
/// challenge refused was not spent, so even a code exchange may be retried this once; a second
/// challenge is the answer, which its check maps to an error.
struct ProviderNonceRetryStage: ProviderStage {
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard request.call.carriesProof, let dpop = request.client.dpop else { return try await next(request) }
        let response = try await next(request)
        guard dpop.nonceChallenged(response, to: request.url) else { return response }
        // Userinfo retries without a line, as a resource request would.
        if !request.call.carriesAccessToken {
            request.client.logger.debug(
                "token endpoint asked for a DPoP nonce; retrying once",
                metadata: ProviderLoggingStage.purpose(of: request.call, at: request.url, method: request.client.authentication.method))
        }
        let retried = try await next(request)
        _ = dpop.nonces.record(retried, from: request.url)
        return retried
    }
}
