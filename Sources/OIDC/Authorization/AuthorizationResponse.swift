public import Foundation

/// A successful authorization response: the code and what came with it (RFC 6749 §4.1.2).
///
/// Made by ``AuthorizationRequest/handleRedirect(_:)`` or ``init(callbackURL:request:)``, which
/// check, in this order: well-formed query with no repeated parameter; `state` equal to the one sent
/// (constant-time, before anything else is looked at); `iss` equal to the expected issuer when present
/// or promised (RFC 9207); then a provider `error`; then the `code`.
public struct AuthorizationResponse: Sendable {
    /// The authorization code; single-use, redacted when printed.
    public let code: Secret
    /// The `state` the callback carried back: the request's own (compared in constant time).
    public let state: String
    /// The `iss` parameter, when the provider sent one (already checked).
    public let issuer: String?

    /// Parses and checks a callback URL against the request that started the flow.
    ///
    /// A request that asked for a signed response (JARM, ``AuthorizationRequest/responseMode``)
    /// needs the provider's keys: use ``init(callbackURL:request:verifier:keys:now:)`` (or
    /// ``RelyingParty/completeLogin(callback:for:now:)``), which this initializer refuses to stand in for.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a request that asked for a signed response;
    ///   ``OIDCError/Code/duplicateParameter``, ``OIDCError/Code/malformedURL``,
    ///   ``OIDCError/Code/stateMissing``, ``OIDCError/Code/stateMismatch`` (possible CSRF),
    ///   ``OIDCError/Code/issuerMismatch`` / ``OIDCError/Code/issuerMissing`` (mix-up defence),
    ///   ``OIDCError/Code/providerError`` with the provider's `error` and description,
    ///   ``OIDCError/Code/missingParameter`` when there is no code.
    public init(callbackURL: URL, request: AuthorizationRequest) throws(OIDCError) {
        if let mode = request.responseMode, mode.isJARM {
            throw .invalidArgument(
                "The request asked for a signed response (response_mode=\(mode.rawValue), JARM): read its callback with AuthorizationResponse(callbackURL:request:verifier:keys:), or RelyingParty.completeLogin(callback:for:), which verify it first."
            )
        }
        try self.init(checking: try Self.queryParameters(of: callbackURL), request: request)
    }

    /// The callback's query parameters.
    ///
    /// - Throws: ``OIDCError/Code/duplicateParameter``, ``OIDCError/Code/malformedURL``.
    static func queryParameters(of callbackURL: URL) throws(OIDCError) -> [OAuthParameter] {
        let query = URLComponents(url: callbackURL, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        return try FormURLEncoding.decode(query)
    }

    /// Checks the parameters of a callback (its query, or a verified JARM response's claims) against
    /// the request: state, RFC 9207 `iss`, a provider error, the code.
    init(checking parameters: [OAuthParameter], request: AuthorizationRequest) throws(OIDCError) {
        guard let state = parameters["state"] else {
            throw OIDCError(
                .stateMissing,
                "The callback carries no state; it was not started by this login (possible CSRF). Start the login again."
            )
        }
        guard ConstantTime.equals(state, request.state) else {
            throw OIDCError(
                .stateMismatch,
                "The callback's state does not match the login in progress (possible CSRF). Start the login again."
            )
        }

        let issuer = parameters["iss"]
        if let expected = request.issuer {
            if let issuer {
                guard request.issuerMatching.matches(issuer, expected: expected) else {
                    throw OIDCError(
                        .issuerMismatch,
                        "The callback comes from another issuer than the one the login was sent to (RFC 9207 mix-up defence).",
                        context: ["expected": expected, "found": UntrustedText.sanitized(issuer)]
                    )
                }
            } else if request.requiresIssuerInResponse {
                throw OIDCError(
                    .issuerMissing,
                    "This login requires the RFC 9207 'iss' parameter in its callback (the provider promises it, or the FAPI 2.0 profile requires it: Security Profile §5.3.2.2) and this one has none; it may come from another provider (a mix-up). Nothing was exchanged.",
                    context: ["expected": expected, "rule": "RFC 9207 iss in the authorization response"]
                )
            }
        }

        if let error = parameters["error"] {
            let details = OIDCError.ProviderError(
                error: error, errorDescription: parameters["error_description"], errorURI: parameters["error_uri"]
            )
            var message = "The provider refused the authorization: \(UntrustedText.sanitized(error))"
            if let description = details.errorDescription { message += " (\(UntrustedText.sanitized(description)))" }
            throw OIDCError(.providerError, message + ".", context: ["error": UntrustedText.sanitized(error)], providerError: details)
        }

        guard let code = parameters["code"], !code.isEmpty else {
            throw OIDCError(.missingParameter, "The callback has neither a code nor an error; the provider's answer is incomplete.")
        }
        self.code = Secret(code)
        self.state = state
        self.issuer = issuer
    }
}
