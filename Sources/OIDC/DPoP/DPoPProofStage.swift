internal import Foundation

/// The DPoP proof of both pipelines (RFC 9449): when the tokens are DPoP-bound (`proofs` gives
/// their ``DPoP``), each request of a call that carries a proof (``HTTPCall/carriesProof``) gets a
/// fresh one. A request that carries the access token comes here as `Authorization: Bearer`, and
/// leaves as `Authorization: DPoP` with the token's hash (`ath`) in the proof (§7.1). Bearer tokens
/// pass untouched.
struct DPoPProofStage: HTTPStage {
    /// The proofs of the tokens in use, or `nil` for bearer tokens.
    let proofs: @Sendable () -> DPoP?

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard call.carriesProof, let dpop = proofs() else { return try await next(request) }
        var request = request
        var accessToken: Secret?
        if call.carriesAccessToken, let token = Self.bearerToken(of: request) {
            request.headers.set("Authorization", "DPoP " + token.revealedValue)
            accessToken = token
        }
        let signed = try dpop.signing(request, accessToken: accessToken)
        // A provider that echoes the proof in its error text must not put it in ours.
        if let proof = signed.headers["DPoP"] { ProviderExchange.current?.sent([proof]) }
        return try await next(signed)
    }

    /// The access token of the request's `Authorization: Bearer` header, as the pipelines set it.
    private static func bearerToken(of request: HTTPRequest) -> Secret? {
        guard let field = request.headers["Authorization"], field.utf8.count > 7,
            field.prefix(7).caseInsensitiveCompare("Bearer ") == .orderedSame
        else { return nil }
        return Secret(String(field.dropFirst(7)))
    }
}
