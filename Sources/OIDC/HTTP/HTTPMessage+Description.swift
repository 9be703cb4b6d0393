internal import Foundation

/// What a request, a response or their headers print: never a credential. Header values that carry
/// one (`Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `DPoP`, `X-API-Key`) are
/// `<redacted>`; a URL, the request's or a header's (`Location`, `Content-Location`, `Referer`, where
/// a redirect carries a code), loses its query, fragment and user information; and a body (a form
/// with a code or a refresh token, a token response) is shown by its size alone. `print`,
/// `String(describing:)`, `String(reflecting:)` and `dump` all show this.
extension HTTPHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The header names whose values are credentials.
    static let credentialNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "dpop", "x-api-key"]
    /// The header names whose values are URLs, shown without query or fragment.
    static let urlNames: Set<String> = ["location", "content-location", "referer"]

    /// `[Accept: application/json, Authorization: <redacted>, Location: https://app.example/cb]`.
    public var description: String {
        "[" + fields.map { "\($0.name): \(Self.printable($0.name, $0.value))" }.joined(separator: ", ") + "]"
    }

    private static func printable(_ name: String, _ value: String) -> String {
        let lowercased = name.lowercased()
        if credentialNames.contains(lowercased) { return "<redacted>" }
        guard urlNames.contains(lowercased) else { return value }
        return URL(string: value).map(HTTPErrorMapping.describe) ?? "<redacted>"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The ``description`` alone, so that `dump` shows no credential either.
    public var customMirror: Mirror { Mirror(self, children: ["fields": description], displayStyle: .struct) }
}

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `POST https://provider.example/token [Content-Type: …, Authorization: <redacted>] (42-byte body)`.
    public var description: String {
        "\(method) \(HTTPErrorMapping.describe(url)) \(headers) (\(body.count)-byte body)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The ``description`` alone, so that `dump` shows no credential either.
    public var customMirror: Mirror { Mirror(self, children: ["request": description], displayStyle: .struct) }
}

extension HTTPResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `HTTP 200 [Content-Type: application/json] (812-byte body)`.
    public var description: String { "HTTP \(status) \(headers) (\(body.count)-byte body)" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The ``description`` alone, so that `dump` shows no credential either.
    public var customMirror: Mirror { Mirror(self, children: ["response": description], displayStyle: .struct) }
}
