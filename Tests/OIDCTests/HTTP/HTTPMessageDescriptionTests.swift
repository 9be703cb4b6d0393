import Foundation
import OIDC
import Testing

/// A request, a response or their headers, printed in any of Swift's ways, show no credential: a
/// DPoP-bound request's token and proof, a form's refresh token, a token response's body.
@Suite("HTTP messages print no credential")
struct HTTPMessageDescriptionTests {
    static let secrets = ["at-SECRET-1", "proof.SECRET.2", "cookie-SECRET-3", "rt-SECRET-4", "code-SECRET-5", "pw-SECRET-6"]

    static func printed(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    @Test("request, response and headers: credential headers redacted, the URL without query or user information, bodies by size")
    func noCredentialPrinted() throws {
        let url = try #require(URL(string: "https://user:pw-SECRET-6@api.example/v1/items?code=code-SECRET-5#f"))
        let request = HTTPRequest(
            method: "POST", url: url,
            headers: ["Authorization": "DPoP at-SECRET-1", "dpop": "proof.SECRET.2", "Cookie": "cookie-SECRET-3", "Accept": "application/json"],
            body: Array("grant_type=refresh_token&refresh_token=rt-SECRET-4".utf8))
        let response = HTTPResponse(
            status: 302, headers: ["Set-Cookie": "cookie-SECRET-3", "DPoP-Nonce": "n-1", "Location": "https://app.example/cb?code=code-SECRET-5&state=s"],
            body: Array(#"{"access_token":"at-SECRET-1"}"#.utf8))
        for text in Self.printed(request) + Self.printed(response) + Self.printed(request.headers) {
            for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
        #expect(request.description == "POST https://api.example/v1/items [Authorization: <redacted>, dpop: <redacted>, Cookie: <redacted>, Accept: application/json] (50-byte body)")
        #expect(response.description.contains("DPoP-Nonce: n-1") && response.description.contains("HTTP 302"))
        #expect(response.description.contains("Location: https://app.example/cb]") || response.description.contains("Location: https://app.example/cb,"), "\(response)")
    }
}
