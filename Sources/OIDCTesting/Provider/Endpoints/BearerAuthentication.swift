internal import OIDC

/// Access tokens at the userinfo endpoint and the protected resource: bearer tokens (RFC 6750) and
/// DPoP-bound ones (RFC 9449 §7), each under its own scheme; certificate-bound ones (RFC 8705 §3)
/// only over a connection with their certificate.
enum BearerAuthentication {
    /// A request whose token was accepted.
    struct Authenticated {
        var record: AccessTokenRecord
        var user: TestUser
        /// `DPoP-Nonce` when the proof's use rotated the nonce: the answer carries it.
        var headers: [(name: String, value: String)] = []
    }

    /// The access token's record and user, or the 401 to send.
    ///
    /// `Authorization: Bearer` takes an unbound token: `WWW-Authenticate: Bearer` when no token came
    /// (§3.1 says no error code then), `Bearer error="invalid_token"` for a bad one, and a DPoP-bound
    /// token sent as a bearer token is refused under the `DPoP` scheme. `Authorization: DPoP` takes a
    /// bound token with a proof by its key for this endpoint (`ath` its hash, `nonce` when required):
    /// `DPoP error="invalid_token"` for a bad or unbound token, `invalid_dpop_proof` or
    /// `use_dpop_nonce` (with `DPoP-Nonce`) for the proof; every DPoP challenge names the accepted
    /// algorithms in `algs`.
    static func authenticate(
        _ request: ProviderRequest, endpoint: TestProvider.Endpoint, _ context: ProviderContext
    ) async -> Result<Authenticated, Unauthorized> {
        let dpop = context.configuration.dpop
        let offersDPoP = dpop.support != .notOffered
        guard let (scheme, token) = request.accessToken, scheme == "bearer" || offersDPoP else {
            if dpop.support == .required {
                return .failure(challenge(dpop: nil, "A DPoP-bound access token and its proof are required.", context))
            }
            return .failure(Unauthorized(response: .json(
                ["error_description": "A bearer access token is required."], status: 401,
                noStore: true, extraHeaders: [("WWW-Authenticate", "Bearer")]
            )))
        }
        guard let valid = await context.state.validAccessToken(token) else {
            let description = "The access token is unknown, expired or revoked."
            if scheme == "dpop" { return .failure(challenge(dpop: "invalid_token", description, context)) }
            return .failure(Unauthorized(response: .json(
                ["error": "invalid_token", "error_description": description],
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
        switch (scheme, valid.record.jkt) {
        case ("bearer", nil):
            return .success(Authenticated(record: valid.record, user: valid.user))
        case ("bearer", .some):
            return .failure(challenge(dpop: "invalid_token", "The access token is DPoP-bound: send it as 'Authorization: DPoP' with a proof.", context))
        case (_, nil):
            return .failure(challenge(dpop: "invalid_token", "The access token is not DPoP-bound: send it as a bearer token.", context))
        case (_, .some(let jkt)):
            do {
                guard let proof = try await DPoPProofCheck.check(request, endpoint: endpoint, accessToken: token, boundKey: jkt, context) else {
                    return .failure(challenge(dpop: "invalid_dpop_proof", "A DPoP-bound access token needs a DPoP proof.", context))
                }
                return .success(Authenticated(record: valid.record, user: valid.user, headers: proof.headers))
            } catch {
                return .failure(challenge(dpop: error.code, error.description, extraHeaders: error.headers, context))
            }
        }
    }

    /// 401 with `WWW-Authenticate: DPoP error="…", error_description="…", algs="…"` and the same
    /// error in the body; without an error (no token came, RFC 6750 §3.1) only `algs`.
    private static func challenge(
        dpop error: String?, _ description: String, extraHeaders: [(name: String, value: String)] = [], _ context: ProviderContext
    ) -> Unauthorized {
        let algorithms = #"algs="\#(context.configuration.dpop.algorithms.map(\.rawValue).joined(separator: " "))""#
        let value = error.map { #"DPoP error="\#($0)", error_description="\#(description)", "# + algorithms } ?? "DPoP " + algorithms
        return Unauthorized(response: .json(
            ["error": error ?? "invalid_request", "error_description": description], status: 401, noStore: true,
            extraHeaders: [("WWW-Authenticate", value)] + extraHeaders
        ))
    }

    struct Unauthorized: Error {
        var response: ProviderResponse
    }
}
