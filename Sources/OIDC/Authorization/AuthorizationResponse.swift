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
    /// - Throws: ``OIDCError/Code/duplicateParameter``, ``OIDCError/Code/malformedURL``,
    ///   ``OIDCError/Code/stateMissing``, ``OIDCError/Code/stateMismatch`` (possible CSRF),
    ///   ``OIDCError/Code/issuerMismatch`` / ``OIDCError/Code/issuerMissing`` (mix-up defence),
    ///   ``OIDCError/Code/providerError`` with the provider's `error` and description,
    ///   ``OIDCError/Code/missingParameter`` when there is no code.
    public init(callbackURL: URL, request: AuthorizationRequest) throws(OIDCError) {
        let query = URLComponents(url: callbackURL, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        let parameters = try FormEncoding.decode(query)

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
                        context: ["expected": expected, "found": Display.sanitized(issuer)]
                    )
                }
            } else if request.requiresIssuerInResponse {
                throw OIDCError(
                    .issuerMissing,
                    "The provider promises an 'iss' parameter in its callbacks (RFC 9207) and this one has none.",
                    context: ["expected": expected]
                )
            }
        }

        if let error = parameters["error"] {
            let details = OIDCError.ProviderError(
                error: error, errorDescription: parameters["error_description"], errorURI: parameters["error_uri"]
            )
            var message = "The provider refused the authorization: \(Display.sanitized(error))"
            if let description = details.errorDescription { message += " (\(Display.sanitized(description)))" }
            throw OIDCError(.providerError, message + ".", context: ["error": Display.sanitized(error)], providerError: details)
        }

        guard let code = parameters["code"], !code.isEmpty else {
            throw OIDCError(.missingParameter, "The callback has neither a code nor an error; the provider's answer is incomplete.")
        }
        self.code = Secret(code)
        self.state = state
        self.issuer = issuer
    }
}

/// Makes untrusted text safe to show: every character that could forge or hide part of a line
/// replaced by `?`, length bounded.
package enum Display {
    package static func sanitized(_ text: String, limit: Int = 200) -> String {
        #if DEBUG
        calls?.increment()
        #endif
        guard text.unicodeScalars.contains(where: isUnsafe) else { return bounded(text, limit: limit) }
        return bounded(String(String.UnicodeScalarView(text.unicodeScalars.map { isUnsafe($0) ? "?" : $0 })), limit: limit)
    }

    /// A scalar that must not reach a terminal or a log line as itself: a control character (`Cc`:
    /// line breaks, escape sequences, NEL U+0085), a format character (`Cf`: bidi overrides and
    /// isolates such as U+202E and U+2066–2069, zero-width characters, the BOM) or a line or
    /// paragraph separator (`Zl`, `Zp`: U+2028, U+2029). Each can end a line early for some reader,
    /// or make the text show something else than it holds.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    private static func bounded(_ text: String, limit: Int) -> String {
        text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    #if DEBUG
    /// Debug builds only, for tests: when set, counts the calls of ``sanitized(_:limit:)`` made in
    /// this task and its child tasks. Log metadata made from outside text, an endpoint or an issuer
    /// goes through it, so a count of zero with logging off shows that no such metadata was built.
    @TaskLocal package static var calls: CallCount?

    /// A thread-safe call counter.
    package final class CallCount: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        package init() {}

        /// The calls counted so far.
        package var value: Int { lock.withLock { count } }

        func increment() { lock.withLock { count += 1 } }
    }
    #endif
}
