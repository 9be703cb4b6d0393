internal import Foundation
internal import Logging

/// The userinfo endpoint (OIDC Core §5.3): a resource-style request, with the access token.
extension TokenClient {
    /// The user's claims from the userinfo endpoint (OIDC Core §5.3), with the access token.
    ///
    /// - Parameters:
    ///   - accessToken: the access token, sent as `Authorization: Bearer`, or `Authorization: DPoP` with a proof when ``dpop`` is set (one retry on a nonce challenge); through the provider pipeline, with the user's ``stages``.
    ///   - expectedSubject: the verified ID token's `sub`; the answer's `sub` must equal it
    ///     (§5.3.2: otherwise the response must not be used).
    /// - Throws: `invalidClaim` (category security) when `sub` is missing or differs;
    ///   `providerError` with `invalid_token` when the access token is refused (401);
    ///   `malformedResponse` for a signed (JWT) answer, which is not supported yet, or a body that
    ///   is not a JSON object.
    public func userinfo(accessToken: Secret, expectedSubject: String) async throws(OIDCError) -> [String: JSONValue] {
        let url = try endpoint(provider.userinfoEndpoint, "userinfo endpoint")
        var headers = HTTPHeaders()
        headers.add("Accept", "application/json")
        logger.debug("requesting userinfo", metadata: ["endpoint": .endpoint(url)])
        // The credential stage puts the token in `Authorization: Bearer`, or `DPoP` with a proof for DPoP-bound tokens.
        let request = ProviderRequest(
            call: .userinfo, method: "GET", url: url, form: [], headers: headers, client: self, secrets: [accessToken.revealedValue],
            accessToken: accessToken)
        // Read inside the call stages, so that they see a refusal as the error the caller gets.
        let exchange = request.exchange
        return try await ProviderPipeline.send(request, passing: { _ in true }) { [self] (response: HTTPResponse) throws(OIDCError) -> [String: JSONValue] in
            try userinfoClaims(response, from: url, expectedSubject: expectedSubject, secrets: exchange.secrets)
        }
    }

    /// The claims of userinfo's `response` from `url`, or the refusal it is, with none of `secrets`
    /// (the access token, the proof) in the error.
    private func userinfoClaims(
        _ response: HTTPResponse, from url: URL, expectedSubject: String, secrets: [String]
    ) throws(OIDCError) -> [String: JSONValue] {
        guard response.status == 200 else {
            logger.debug("userinfo refused", metadata: ["endpoint": .endpoint(url), "status": .int(response.status)])
            if response.status == 401, let error = Self.challengeError(response) {
                // RFC 6750 §3: the error comes in the challenge, not the body.
                let details = OIDCError.ProviderError(error: error, errorDescription: nil)
                throw OIDCError(
                    .providerError, "The userinfo endpoint refused the access token (\(UntrustedText.sanitized(error, limit: 64))); refresh it or log in again.",
                    context: ["status": "401", "error": UntrustedText.sanitized(error, limit: 64)], providerError: details
                )
            }
            throw HTTPErrorMapping.unexpectedStatus(response, endpoint: url, what: "userinfo endpoint", secrets: secrets)
        }
        if let type = response.headers["Content-Type"]?.lowercased(), type.hasPrefix("application/jwt") {
            throw OIDCError(.malformedResponse, "The userinfo endpoint answered with a signed JWT, which this library does not accept yet; ask for JSON.")
        }
        let claims: [String: JSONValue]
        do { claims = try StrictJSONParser.parseObject(response.body) } catch {
            throw OIDCError(.malformedResponse, "The userinfo answer is not a valid JSON object (\(error)).")
        }
        guard let subject = claims["sub"]?.stringValue else {
            throw OIDCError(.invalidClaim, "The userinfo answer has no 'sub'; it must not be used (OIDC Core §5.3.2).", context: ["claim": "sub"])
        }
        if !ConstantTime.equals(subject, expectedSubject) {
            throw OIDCError(
                .invalidClaim, "The userinfo answer is about another user than the ID token (sub differs); it must not be used (OIDC Core §5.3.2).",
                context: ["claim": "sub"]
            )
        }
        return claims
    }


    /// The `error` of a `Bearer` (RFC 6750 §3) or `DPoP` (RFC 9449 §7.1) challenge of a 401.
    static func challengeError(_ response: HTTPResponse) -> String? {
        for field in response.headers.values("WWW-Authenticate") {
            for challenge in AuthenticationChallenge.parse(field) {
                let scheme = challenge.scheme.lowercased()
                if scheme == "bearer" || scheme == "dpop", let error = challenge.parameters["error"] { return error }
            }
        }
        return nil
    }
}
