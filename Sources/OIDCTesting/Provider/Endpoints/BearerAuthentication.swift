internal import OIDC

/// Bearer access tokens at the userinfo endpoint and the protected resource (RFC 6750).
enum BearerAuthentication {
    /// The access token's record and user, or the 401 to send: `WWW-Authenticate: Bearer` when no
    /// token came (§3.1 says no error code then), `Bearer error="invalid_token"` for a bad one.
    static func authenticate(
        _ request: ProviderRequest, _ context: ProviderContext
    ) async -> Result<(record: AccessTokenRecord, user: TestUser), Unauthorized> {
        guard let token = request.bearerToken else {
            return .failure(Unauthorized(response: .json(
                ["error": "invalid_request", "error_description": "A bearer access token is required."], status: 401,
                noStore: true, extraHeaders: [("WWW-Authenticate", "Bearer")]
            )))
        }
        guard let valid = await context.state.validAccessToken(token) else {
            return .failure(Unauthorized(response: .json(
                ["error": "invalid_token", "error_description": "The access token is unknown, expired or revoked."],
                status: 401, noStore: true, extraHeaders: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]
            )))
        }
        if let bound = valid.record.certificateThumbprint {
            // RFC 8705 §3: a certificate-bound token is taken only over a connection with that certificate.
            let presented = request.clientCertificate.flatMap { try? ClientCertificateCheck.thumbprint(der: $0) }
            guard let presented, Secret(presented) == Secret(bound) else {
                return .failure(Unauthorized(response: .json(
                    ["error": "invalid_token", "error_description": "The access token is bound to a client certificate this connection did not present."],
                    status: 401, noStore: true, extraHeaders: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]
                )))
            }
        }
        return .success(valid)
    }

    struct Unauthorized: Error {
        var response: ProviderResponse
    }
}
