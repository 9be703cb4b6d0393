internal import Foundation

/// The DPoP nonce retry of both pipelines (RFC 9449 §8, §9): every answer's `DPoP-Nonce` is kept;
/// a `use_dpop_nonce` challenge with a new nonce (a 400 at the provider, a 401 `DPoP` challenge at
/// a resource) gets one retry, through the stages inside this one again (a fresh client assertion,
/// a fresh proof with the nonce). It is never a reason to refresh: a code or refresh token the
/// challenge refused was not spent, so even a code exchange may be retried this once.
///
/// At the provider, a second challenge is the answer (its check maps it to an error). At a
/// resource, a second challenge, a challenge without a usable nonce and a refused proof
/// (`invalid_dpop_proof`) are ``OIDCError/Code/unauthorized`` errors: the token is fine, so the
/// session must not refresh it.
struct DPoPNonceRetryStage: HTTPStage {
    /// The proofs of the tokens in use, or `nil` for bearer tokens (then this stage does nothing).
    let proofs: @Sendable () -> DPoP?
    /// Logs the retry, when its pipeline logs one.
    let retrying: @Sendable (HTTPRequest, HTTPCall) -> Void

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard call.carriesProof, let dpop = proofs() else { return try await next(request) }
        let response = try await next(request)
        guard dpop.nonceChallenged(response, to: request.url) else { return try Self.checked(response, of: request, call: call) }
        retrying(request, call)
        let retried = try await next(request)
        guard dpop.nonceChallenged(retried, to: request.url), case .resource = call else { return try Self.checked(retried, of: request, call: call) }
        // A second challenge is the resource's problem, not the token's: no refresh.
        throw OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(request.url)) asked for a new DPoP nonce twice in a row; it rotates nonces faster than a request can use one. Try again later.",
            context: ["status": String(retried.status), "dpop": "use_dpop_nonce"]
        )
    }

    /// A resource's answer, unless it refuses the proof rather than the token (RFC 9449 §7.1, §9).
    private static func checked(_ response: HTTPResponse, of request: HTTPRequest, call: HTTPCall) throws(OIDCError) -> HTTPResponse {
        guard case .resource = call else { return response }
        let errors = DPoP.resourceChallengeErrors(response)
        if errors.contains("use_dpop_nonce") {
            // A nonce challenge without a usable nonce: the token is fine, a refresh would not help (RFC 9449 §9).
            throw OIDCError(
                .unauthorized,
                "The resource at \(HTTPErrorMapping.describe(request.url)) asked for a DPoP nonce without giving a usable one (DPoP-Nonce); the token was not refreshed.",
                context: ["status": "401", "dpop": "use_dpop_nonce"]
            )
        }
        if errors.contains("invalid_dpop_proof") {
            // The proof was refused, not the token: new tokens would be proven the same way (RFC 9449 §7.1).
            throw OIDCError(
                .unauthorized,
                "The resource at \(HTTPErrorMapping.describe(request.url)) refused the DPoP proof (invalid_dpop_proof): this machine's clock may be off, or the resource sees another URL or method than the one signed; the token was not refreshed.",
                context: ["status": "401", "dpop": "invalid_dpop_proof"]
            )
        }
        return response
    }
}
