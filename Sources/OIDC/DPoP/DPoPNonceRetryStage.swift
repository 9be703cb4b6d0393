internal import Foundation
internal import Logging

/// The resource pipeline's DPoP nonce retry (RFC 9449 §9): every answer's `DPoP-Nonce` is kept; a
/// 401 `DPoP` challenge `use_dpop_nonce` with a new nonce gets one retry, through the stages inside
/// this one again (a fresh proof with the nonce). It is never a reason to refresh: a second
/// challenge, a challenge without a usable nonce and a refused proof (`invalid_dpop_proof`) are
/// ``OIDCError/Code/unauthorized`` errors, since the token is fine. (The provider's twin is
/// `ProviderNonceRetryStage`.)
struct DPoPNonceRetryStage: ResourceStage {
    func intercept(_ request: HTTPRequest, attempt: ResourceAttempt, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard let dpop = attempt.credential.proofs else { return try await next(request) }
        let response = try await next(request)
        guard dpop.nonceChallenged(response, to: request.url) else { return try Self.checked(response, of: request) }
        attempt.logger.debug(
            "resource asked for a DPoP nonce; retrying once with it", metadata: attempt.metadata.merging(["url": .endpoint(request.url)]) { $1 })
        let retried = try await next(request)
        guard dpop.nonceChallenged(retried, to: request.url) else { return try Self.checked(retried, of: request) }
        // A second challenge is the resource's problem, not the token's: no refresh.
        throw OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(request.url)) asked for a new DPoP nonce twice in a row; it rotates nonces faster than a request can use one. Try again later.",
            context: ["status": String(retried.status), "dpop": "use_dpop_nonce"]
        )
    }

    /// A resource's answer, unless it refuses the proof rather than the token (RFC 9449 §7.1, §9).
    private static func checked(_ response: HTTPResponse, of request: HTTPRequest) throws(OIDCError) -> HTTPResponse {
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
