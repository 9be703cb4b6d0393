import Foundation
import OIDC
import Testing

@Suite("Base64url")
struct Base64URLTests {
    @Test("encoding round-trips every length from 0 to 64 bytes")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("="))
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test("known values", arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("\u{FB}\u{FF}", "w7vDvw")])
    func known(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test("non-canonical input is rejected", arguments: ["Zg==", "Zg=", "Z", "Zh", "Zm9", "Zm9v+", "Zm9v/", "Zm 9v", "Zm9v\n", " Zm9v", "Zm9v.", "Zm9vYg=="])
    func strict(text: String) {
        // "Zh" and "Zm9" have non-zero unused bits; the rest have foreign characters or padding.
        #expect(Base64URL.decode(text) == nil)
    }
}

@Suite("Form encoding (application/x-www-form-urlencoded)")
struct FormEncodingTests {
    @Test("the Schibsted SDK's vectors")
    func schibstedVectors() {
        #expect(FormEncoding.encode(value: "Hej Världen") == "Hej+V%C3%A4rlden")
        #expect(
            FormEncoding.encode(value: "https://example.com/test?key1=value1&key2=value2")
                == "https%3A%2F%2Fexample.com%2Ftest%3Fkey1%3Dvalue1%26key2%3Dvalue2"
        )
        #expect(
            FormEncoding.encode([.init("grant_type", "authorization_code"), .init("redirect_uri", "com.example:/login")])
                == "grant_type=authorization_code&redirect_uri=com.example%3A%2Flogin"
        )
    }

    @Test("tricky values round-trip exactly", arguments: ["a+b", "a&b=c", "#frag", "/path?q", "100%", "Världen ✓", " lead", "*-._~", ""])
    func roundTrip(value: String) throws {
        let body = FormEncoding.encode([.init("k", value), .init("x y", "z")])
        let decoded = try FormEncoding.decode(body)
        #expect(decoded == [.init("k", value), .init("x y", "z")])
    }

    @Test("a repeated name is rejected unless duplicates are allowed")
    func duplicates() throws {
        let error = #expect(throws: OIDCError.self) { try FormEncoding.decode("code=a&state=s&code=b") }
        #expect(error?.code == .duplicateParameter)
        #expect(error?.context["parameter"] == "code")
        #expect(try FormEncoding.decode("a=1&a=2", allowDuplicates: true).count == 2)
    }

    @Test("broken escapes and invalid UTF-8 are rejected", arguments: ["a=%", "a=%4", "a=%zz", "a=%FF", "%C3=1", "a=%C3%28"])
    func malformed(text: String) {
        let error = #expect(throws: OIDCError.self) { try FormEncoding.decode(text) }
        #expect(error?.code == .malformedURL)
    }
}

@Suite("Secrets")
struct SecretTests {
    @Test("a secret is redacted everywhere it could be printed, and compares by value")
    func redaction() {
        let secret = Secret("tok-123-SECRET")
        var dumped = ""
        dump(secret, to: &dumped)
        for text in ["\(secret)", String(reflecting: secret), String(describing: [secret]), dumped] {
            #expect(!text.contains("SECRET"), "leaked in: \(text)")
        }
        #expect(secret == Secret("tok-123-SECRET"))
        #expect(secret != Secret("tok-123-SECRET!"))
        #expect(secret != Secret("tok-123-SECREX"))
    }
}

@Suite("HTTP header fields")
struct HTTPHeadersTests {
    @Test("names are compared case-insensitively everywhere, equality included; values and order exactly")
    func caseInsensitiveNames() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-OIDC": "v1"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers == ["content-type": "application/json", "x-oidc": "v1"])
        #expect(headers != ["Content-Type": "APPLICATION/JSON", "X-OIDC": "v1"])
        #expect(headers != ["X-OIDC": "v1", "Content-Type": "application/json"])
        headers.set("x-oidc", "v2")
        #expect(headers.values("X-OIDC") == ["v2"])
    }
}
