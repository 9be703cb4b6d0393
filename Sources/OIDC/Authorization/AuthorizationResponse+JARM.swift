public import Foundation

extension AuthorizationResponse {
    /// Reads the callback of a request that asked for a signed response (JARM,
    /// ``AuthorizationRequest/responseMode``): its one `response` parameter is verified first
    /// (``JARMVerifier``: signature with a key of `keys`, refetched once on an unknown `kid`; the
    /// algorithm; `iss` exactly the issuer; `aud`; `exp`), then its claims are checked as a plain
    /// callback's query is (`state`, RFC 9207 `iss`, a provider `error`, the `code`).
    ///
    /// A callback with plain `code`, `state`, `error` or `iss` parameters, instead of or beside
    /// `response`, is refused: they are unsigned, and taking them would let whoever crafts the
    /// redirect undo the protection JARM was asked for.
    ///
    /// - Parameters:
    ///   - callbackURL: the redirect URI with the provider's query.
    ///   - request: the request that started the flow; its ``AuthorizationRequest/responseMode`` must
    ///     be a JWT one.
    ///   - verifier: how the response is verified (``JARMVerifier/init(provider:clientID:)``).
    ///   - keys: the provider's keys.
    ///   - now: the time `exp` is checked at.
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a request that did not ask for a signed
    ///   response; ``OIDCError/Code/duplicateParameter`` or ``OIDCError/Code/malformedURL`` for an
    ///   unreadable query; ``OIDCError/Code/unsecuredResponse`` for plain parameters (a downgrade);
    ///   ``OIDCError/Code/missingParameter`` when there is no `response`; what
    ///   ``JARMVerifier`` throws; then what ``init(callbackURL:request:)`` throws for the claims.
    public init(
        callbackURL: URL, request: AuthorizationRequest, verifier: JARMVerifier, keys: JWKSCache, now: Date = Date()
    ) async throws(OIDCError) {
        guard request.responseMode?.isJARM == true else {
            throw .invalidArgument("The request did not ask for a signed response (JARM); read its callback with AuthorizationResponse(callbackURL:request:).")
        }
        let response = try Self.securedResponse(in: try Self.queryParameters(of: callbackURL))
        let claims = try await verifier.verify(response, keys: keys, now: now)
        try self.init(checking: claims.map { OAuthParameter($0.key, $0.value) }, request: request)
    }

    /// The parameters that, outside a signed response, would stand for it: never taken from a JARM callback.
    static let plainResponseParameters = ["code", "state", "error", "iss", "id_token", "access_token"]

    /// The one `response` parameter of a JARM callback.
    ///
    /// - Throws: ``OIDCError/Code/unsecuredResponse`` when plain response parameters come instead
    ///   of it or beside it; ``OIDCError/Code/missingParameter`` when it is missing or empty.
    static func securedResponse(in parameters: [OAuthParameter]) throws(OIDCError) -> String {
        let plain = plainResponseParameters.filter { parameters[$0] != nil }
        let response = parameters["response"]
        guard plain.isEmpty else {
            var message = response == nil
                ? "A signed response (JARM) was asked for, and the callback carries plain, unsigned parameters (\(plain.joined(separator: ", "))) instead: a downgrade, refused."
                : "A signed response (JARM) was asked for, and the callback carries plain, unsigned parameters (\(plain.joined(separator: ", "))) beside it: refused."
            var context = ["parameters": plain.joined(separator: ",")]
            if response == nil, let error = parameters["error"] {
                // Unsigned, so not trusted, but the likeliest reason: a provider that does not do JARM for this client.
                message += " It says error=\(UntrustedText.sanitized(error, limit: 64)), unverified: check that the provider offers response_mode=jwt to this client."
                context["error"] = UntrustedText.sanitized(error, limit: 64)
            }
            throw OIDCError(.unsecuredResponse, message, context: context)
        }
        guard let response, !response.isEmpty else {
            throw OIDCError(.missingParameter, "A signed response (JARM) was asked for, and the callback has no 'response' parameter; the provider's answer is incomplete.")
        }
        return response
    }
}
