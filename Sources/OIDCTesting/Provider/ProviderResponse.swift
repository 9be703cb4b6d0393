internal import Foundation
internal import OIDC

/// One HTTP response as the provider's handlers produce it.
struct ProviderResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Close the connection without answering (a fault for transport-error tests).
    var dropsConnection = false

    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static let noStore: [(name: String, value: String)] = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]

    /// A JSON object (sorted keys, for stable output; ``JSONBytes``).
    static func json(_ object: [String: Any], status: Int = 200, noStore: Bool = false, extraHeaders: [(name: String, value: String)] = []) -> ProviderResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if noStore { headers += Self.noStore }
        return ProviderResponse(status: status, headers: headers + extraHeaders, body: JSONBytes.object(object))
    }

    /// An RFC 6749 §5.2 error body: `{"error": …, "error_description": …}`, never cached.
    static func oauthError(_ error: OAuthError, extraHeaders: [(name: String, value: String)] = []) -> ProviderResponse {
        var object: [String: Any] = ["error": error.code]
        if let description = error.description { object["error_description"] = description }
        if let interval = error.interval { object["interval"] = interval }
        var headers = extraHeaders
        if let retryAfter = error.retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        if error.code == "invalid_client", error.status == 401 {
            headers.append(("WWW-Authenticate", #"Basic realm="OIDCTesting""#))
        }
        return json(object, status: error.status, noStore: true, extraHeaders: headers)
    }

    /// A small HTML page; the caller escapes what it interpolates (``HTML/escape(_:)``).
    static func html(_ page: String, status: Int = 200) -> ProviderResponse {
        ProviderResponse(
            status: status,
            headers: [("Content-Type", "text/html; charset=utf-8")] + noStore,
            body: Array(page.utf8)
        )
    }

    static func text(_ text: String, status: Int, extraHeaders: [(name: String, value: String)] = []) -> ProviderResponse {
        ProviderResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + extraHeaders, body: Array(text.utf8))
    }

    /// `302 Found` to `location`, not cached.
    static func redirect(to location: String) -> ProviderResponse {
        ProviderResponse(status: 302, headers: [("Location", location)] + noStore)
    }

    /// `location` with the parameters appended to its query, each value percent-encoded
    /// (RFC 3986 unreserved characters only).
    static func redirect(to location: String, adding parameters: [OAuthParameter]) -> ProviderResponse {
        redirect(to: appending(parameters, to: location))
    }

    static func appending(_ parameters: [OAuthParameter], to location: String) -> String {
        guard !parameters.isEmpty else { return location }
        let query = parameters.map {
            PercentEncoding.encode($0.name, style: .uriComponent) + "=" + PercentEncoding.encode($0.value, style: .uriComponent)
        }.joined(separator: "&")
        let separator = location.contains("?") ? (location.hasSuffix("?") || location.hasSuffix("&") ? "" : "&") : "?"
        return location + separator + query
    }

    static let notFound = text("Not Found", status: 404)

    static func methodNotAllowed(_ allowed: String) -> ProviderResponse {
        text("Method Not Allowed", status: 405, extraHeaders: [("Allow", allowed)])
    }
}

/// An OAuth error code with its description and HTTP status (RFC 6749 §5.2: 400, or 401 for
/// `invalid_client` with client credentials).
struct OAuthError: Error, Sendable, Equatable {
    var code: String
    var description: String?
    var status: Int = 400
    /// A new polling interval, in a device poll's `slow_down` answer (RFC 8628 §3.5).
    var interval: Int?
    /// A `Retry-After` header, in seconds.
    var retryAfter: Int?

    static func invalidRequest(_ description: String) -> OAuthError { OAuthError(code: "invalid_request", description: description) }
    static func invalidGrant(_ description: String) -> OAuthError { OAuthError(code: "invalid_grant", description: description) }
    static func invalidClient(_ description: String) -> OAuthError { OAuthError(code: "invalid_client", description: description, status: 401) }
    static func invalidScope(_ description: String) -> OAuthError { OAuthError(code: "invalid_scope", description: description) }
}
