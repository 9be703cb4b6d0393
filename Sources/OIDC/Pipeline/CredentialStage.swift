internal import Foundation

/// The resource pipeline's credential: the attempt's access token as `Authorization: Bearer` (RFC
/// 6750 §2.1), or for DPoP-bound tokens as `Authorization: DPoP` with a fresh proof that holds the
/// token's hash (RFC 9449 §7.1). Written once, from the attempt, never read back from a header.
struct CredentialStage: ResourceStage {
    func intercept(_ request: HTTPRequest, attempt: ResourceAttempt, next: Next) async throws(OIDCError) -> HTTPResponse {
        var request = request
        _ = try DPoP.present(accessToken: attempt.credential.accessToken, proofs: attempt.credential.proofs, method: request.method, url: request.url, headers: &request.headers)
        return try await next(request)
    }
}
