import Foundation
import OIDCTesting
import Testing

/// What the kit's servers write on every answer without Foundation's per-request cost: the `Date`
/// header (``HTTPDate``) and JSON bodies (``JSONBytes``), each against Foundation's own output.
@Suite("HTTP servers: Date header and JSON bodies")
struct HTTPServerEncodingTests {
    @Test("the Date header is RFC 9110's IMF-fixdate, as DateFormatter writes it, across leap days and centuries")
    func httpDate() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        var seconds: Int64 = 0
        // 0 to about 2106 in uneven steps: every weekday, month, hour and leap rule is met.
        while seconds < 4_300_000_000 {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.format(date) == formatter.string(from: date), "\(seconds)")
            seconds += 86_400 * 13 + 3_607
        }
        for day in ["2000-02-29", "2100-02-28", "2100-03-01", "1999-12-31"] {
            let parser = ISO8601DateFormatter()
            let date = try! #require(parser.date(from: day + "T23:59:59Z"))
            #expect(HTTPDate.format(date) == formatter.string(from: date))
        }
    }

    @Test("JSON bodies are JSONSerialization's bytes (sorted keys, unescaped slashes), escapes and nesting included")
    func jsonBytes() throws {
        let objects: [[String: Any]] = [
            [
                "issuer": "http://127.0.0.1:8080/realms/a", "scopes_supported": ["openid", "profile"], "request_uri_parameter_supported": false,
                "code_challenge_methods_supported": ["S256"], "mtls_endpoint_aliases": ["token_endpoint": "https://x/mtls/token"],
                "exp": 1_800_000_000, "nested": [["a": 1], ["b": [true, false]]], "empty": [String: Any](), "none": [Any](),
                "null": NSNull(), "ratio": 1.5,
            ],
            ["error": "invalid_request", "error_description": "quote \" backslash \\ newline \n tab \t bell \u{07} é ✓"],
            ["cnf": ["x5t#S256": "abc", "jkt": "def"], "aud": ["https://api.example.com/"], "Token_Type": "DPoP", "scope": ""],
        ]
        for object in objects {
            let foundation = Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            #expect(JSONBytes.object(object) == foundation, "\(String(decoding: JSONBytes.object(object), as: UTF8.self))")
        }
        // A type the writer does not know still gets written, by JSONSerialization.
        let other: [String: Any] = ["n": NSNumber(value: 7)]
        #expect(try JSONSerialization.jsonObject(with: Data(JSONBytes.object(other))) as? [String: Int] == ["n": 7])
    }
}
