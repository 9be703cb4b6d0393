internal import Foundation
internal import OIDC

/// One HTTP request as the provider's handlers see it: no NIO types, so handlers are plain
/// functions from a request value to a response value.
struct ProviderRequest: Sendable {
    var method: String
    /// The path of the request target, without the query.
    var path: String
    /// The raw query (after `?`), if any.
    var query: String?
    /// Header fields in the order received; names as sent.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// The DER of the TLS client certificate of the connection (RFC 8705), when one was presented.
    var clientCertificate: [UInt8]?

    init(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.headers = headers
        self.body = body
    }

    /// The values of a header field, case-insensitively.
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The value of a header field that must appear at most once; `nil` when absent or repeated.
    func header(_ name: String) -> String? {
        let values = headerValues(name)
        return values.count == 1 ? values[0] : nil
    }

    /// The query parameters; duplicates kept so callers can reject them.
    func queryParameters() throws(OIDCError) -> [OAuthParameter] {
        try FormURLEncoding.decode(query ?? "", allowDuplicates: true)
    }

    /// Whether the body is declared as `application/x-www-form-urlencoded`.
    var hasFormBody: Bool {
        guard let type = header("Content-Type") else { return false }
        let mediaType = (type.split(separator: ";", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
        return mediaType.lowercased() == "application/x-www-form-urlencoded"
    }

    /// The form body's parameters; duplicates kept so callers can reject them.
    func formParameters() throws(OIDCError) -> [OAuthParameter] {
        guard let text = String(validating: body, as: UTF8.self) else {
            throw OIDCError(.malformedURL, "The form body is not UTF-8.")
        }
        return try FormURLEncoding.decode(text, allowDuplicates: true)
    }

    /// The bearer token of an `Authorization: Bearer …` header (RFC 6750 §2.1).
    var bearerToken: String? {
        guard let (scheme, token) = accessToken, scheme == "bearer" else { return nil }
        return token
    }

    /// The scheme (lowercased) and token of an `Authorization: Bearer …` or `Authorization: DPoP …`
    /// header (RFC 6750 §2.1, RFC 9449 §7.1); `nil` for anything else.
    var accessToken: (scheme: String, token: String)? {
        guard let value = header("Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, ["bearer", "dpop"].contains(parts[0].lowercased()) else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : (parts[0].lowercased(), token)
    }
}

extension Array where Element == OAuthParameter {
    /// The first name that appears more than once, if any.
    var firstDuplicateName: String? {
        var seen = Set<String>()
        for parameter in self where !seen.insert(parameter.name).inserted { return parameter.name }
        return nil
    }

    /// Whether `name` appears more than once.
    func isRepeated(_ name: String) -> Bool {
        lazy.filter { $0.name == name }.count > 1
    }

    /// The value of `name` when present and not empty.
    func nonEmpty(_ name: String) -> String? {
        guard let value = self[name], !value.isEmpty else { return nil }
        return value
    }
}
