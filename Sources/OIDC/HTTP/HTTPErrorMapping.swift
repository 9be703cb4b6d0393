internal import Foundation

/// Turns a provider endpoint's unsuccessful answer into a typed error: RFC 6749 §5.2
/// JSON, RFC 9457 problem details, or anything else, classed as a client problem
/// (``OIDCError/Category/provider``: fix the request or log the user out) or a server problem
/// (``OIDCError/Category/transient``: try again later, log nobody out).
enum HTTPErrorMapping {
    /// OAuth error codes that mean "the server, not you" whatever the status.
    static let transientErrorCodes: Set<String> = ["temporarily_unavailable", "server_error"]

    /// - Parameters:
    ///   - secrets: values the request carried (a code, a refresh token, a client secret): a
    ///     provider that echoes one in its error text does not get it printed.
    ///   - authentication: how the client authenticated the request, when it did: a 401 or 403
    ///     with no body at all (glewlwyd's refusal) then says the client was refused, and what to
    ///     check.
    static func unexpectedStatus(
        _ response: HTTPResponse, endpoint: URL, what: String, secrets: [String] = [], authentication: ClientAuthentication? = nil
    ) -> OIDCError {
        // The wait a `Retry-After` asks for, typed, for callers that back off (a device poll).
        mapped(response, endpoint: endpoint, what: what, secrets: secrets, authentication: authentication)
            .retrying(after: response.headers["Retry-After"].flatMap { RetryAfter.duration($0, now: Date()) })
    }

    private static func mapped(
        _ response: HTTPResponse, endpoint: URL, what: String, secrets: [String], authentication: ClientAuthentication?
    ) -> OIDCError {
        var context = ["status": String(response.status), "endpoint": describe(endpoint)]
        if let retryAfter = response.headers["Retry-After"] { context["retryAfter"] = UntrustedText.sanitized(retryAfter, limit: 64) }
        let providerError = parseProviderError(response).map { error in
            OIDCError.ProviderError(
                error: redact(error.error, secrets), errorDescription: error.errorDescription.map { redact($0, secrets) },
                errorURI: error.errorURI.map { redact($0, secrets) }
            )
        }
        if let providerError { context["error"] = UntrustedText.sanitized(providerError.error, limit: 64) }
        let detail = providerError.map { error in
            UntrustedText.sanitized(error.error, limit: 64) + (error.errorDescription.map { " (\(UntrustedText.sanitized($0)))" } ?? "")
        }
        if response.status >= 500 || response.status == 429 || providerError.map({ transientErrorCodes.contains($0.error) }) == true {
            return OIDCError(
                .serverError,
                "The \(what) at \(describe(endpoint)) is unavailable (HTTP \(response.status)\(detail.map { ", \($0)" } ?? "")); try again later.",
                context: context, providerError: providerError
            )
        }
        let refusedClient = response.status == 401 || response.status == 403 ? (providerError == nil && response.body.isEmpty) : false
        if let authentication, authentication.method == .privateKeyJWT || authentication.method == .clientSecretJWT,
            refusedClient || providerError?.error == "invalid_client"
        {
            // What a program that names its own settings (the oidc command) needs to say the same in
            // its words: the assertion's method, audience and kid. None is a secret.
            context["clientAssertion"] = authentication.method.rawValue
            context["assertionAudience"] = authentication.assertionAudience == .issuer ? "issuer" : "endpoint"
            if let keyID = authentication.signingKey?.keyID { context["kid"] = UntrustedText.sanitized(keyID, limit: 128) }
            let refusal = detail.map { "refused the client: \($0)" } ?? "refused the client (HTTP \(response.status), no OAuth error)"
            return OIDCError(
                .providerError, "The \(what) at \(describe(endpoint)) \(refusal). Check \(credential(of: authentication)).",
                context: context, providerError: providerError
            )
        }
        if let detail {
            return OIDCError(
                .providerError, "The \(what) at \(describe(endpoint)) refused the request: \(detail).",
                context: context, providerError: providerError
            )
        }
        if let authentication, refusedClient {
            return OIDCError(
                .providerError,
                "The \(what) at \(describe(endpoint)) refused the client (HTTP \(response.status), no OAuth error): check the client id and its \(credential(of: authentication)), and its registration at the provider.",
                context: context
            )
        }
        if (300..<400).contains(response.status) {
            return OIDCError(
                .malformedResponse,
                "The \(what) at \(describe(endpoint)) answered with a redirect (HTTP \(response.status)), which is not followed; check the endpoint URL.",
                context: context
            )
        }
        let type = response.headers["Content-Type"].map { UntrustedText.sanitized($0, limit: 64) } ?? "no content type"
        // A document anyone may fetch (metadata, a JWKS) does not depend on the client.
        let check = authentication == nil && secrets.isEmpty && what != "client registration"
            ? "check the URL" : "check the endpoint URL and the client's registration"
        return OIDCError(
            .malformedResponse,
            "The \(what) at \(describe(endpoint)) answered HTTP \(response.status) with an unexpected body (\(type)); \(check).",
            context: context
        )
    }

    /// OpenSSL's reasons for a first answer that is not TLS at all: a plain-http server (or
    /// another protocol) on the port.
    static let notTLSReasons: Set<String> = ["WRONG_VERSION_NUMBER", "HTTP_REQUEST", "HTTPS_PROXY_REQUEST", "PACKET_LENGTH_TOO_LONG", "UNKNOWN_PROTOCOL"]

    /// A failed TLS handshake with `authority` for OpenSSL's `reason`: a server that does not speak
    /// TLS on the port (an https URL for a plain-http server) is named as one, with the http URL to
    /// try on loopback; anything else is a certificate to check.
    static func tlsHandshakeFailure(authority: String, reason: String) -> OIDCError {
        let reasons = Set(reason.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard reasons.isDisjoint(with: notTLSReasons) else {
            let host = authority.lastIndex(of: ":").map { String(authority[..<$0]) } ?? authority
            let hint = EndpointURLPolicy.isLoopback(host: host)
                ? "did you mean http://\(authority)?" : "check the port in the URL (plain http is allowed only on loopback)."
            return OIDCError(
                .tlsFailure, "\(authority) does not speak TLS on this port (\(reason)): \(hint)", context: ["host": authority]
            )
        }
        return OIDCError(
            .tlsFailure,
            "The TLS handshake with \(authority) failed (\(reason)): check that its certificate is valid for this host and issued by a trusted CA.",
            context: ["host": authority]
        )
    }

    /// What a client authenticating with `authentication` should check.
    private static func credential(of authentication: ClientAuthentication) -> String {
        switch authentication.method {
        case .none: return "registration as a public client (this one sent no credentials)"
        case .clientSecretBasic, .clientSecretPost: return "secret (\(authentication.method.rawValue))"
        case .tlsClientAuth: return "TLS client certificate (tls_client_auth: issued by a CA the provider trusts, with the subject it registered)"
        case .selfSignedTLSClientAuth: return "TLS client certificate (self_signed_tls_client_auth: the one the provider registered)"
        case .clientSecretJWT:
            return "the client id, its secret (client_secret_jwt) and its registration at the provider, and whom its assertions are addressed to (\(audience(of: authentication)))"
        case .privateKeyJWT:
            let kid = authentication.signingKey?.keyID.map { "'\(UntrustedText.sanitized($0, limit: 128))'" } ?? "none"
            return "the client id; that its key (private_key_jwt) is the one the provider registered for it, under the kid its assertions carry (JWSSigningKey.keyID, now \(kid); the key's RFC 7638 thumbprint unless one is given); and whom its assertions are addressed to (\(audience(of: authentication)))"
        }
    }

    /// Whom assertions are addressed to now, and what the other servers want.
    private static func audience(of authentication: ClientAuthentication) -> String {
        authentication.assertionAudience == .issuer
            ? "now the issuer; servers that follow OIDC Core §9's older text want the endpoint's URL: assertionAudience .endpoint"
            : "now the endpoint's URL; FAPI 2.0 servers want the issuer: assertionAudience .issuer"
    }

    /// An RFC 6749 §5.2 error object, or an RFC 9457 problem, from the body; `nil` for anything else.
    static func parseProviderError(_ response: HTTPResponse) -> OIDCError.ProviderError? {
        guard !response.body.isEmpty, response.body.count <= 64 * 1024,
            let object = try? StrictJSONParser.parseObject(response.body)
        else { return nil }
        if let error = object["error"]?.stringValue, !error.isEmpty {
            return OIDCError.ProviderError(
                error: error, errorDescription: object["error_description"]?.stringValue, errorURI: object["error_uri"]?.stringValue
            )
        }
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.hasPrefix("application/problem+json") || object["type"] != nil || object["title"] != nil {
            // RFC 9457: `type` (a URI, "about:blank" by default), `title`, `detail`.
            let type = object["type"]?.stringValue
            let title = object["title"]?.stringValue
            guard let name = title ?? type else { return nil }
            return OIDCError.ProviderError(error: name, errorDescription: object["detail"]?.stringValue, errorURI: type)
        }
        return nil
    }

    /// `text` with every occurrence of a secret replaced by `<redacted>`.
    static func redact(_ text: String, _ secrets: [String]) -> String {
        var text = text
        for secret in secrets where secret.count >= 4 { text = text.replacingOccurrences(of: secret, with: "<redacted>") }
        return text
    }

    /// The endpoint for messages: scheme, host, port and path; never the query (it may carry a token).
    static func describe(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "the endpoint" }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "the endpoint"
    }
}
