import Foundation
import OIDC
import Testing

/// Text from outside (a provider's JWKS, a callback's parameter names) reaches messages only
/// sanitized and bounded; a JWK never shows its secret material (issue 13, findings 3 and 5).
@Suite("Untrusted text and secret key material in messages")
struct UntrustedTextTests {
    static let escape = "\u{1B}[2J\u{1B}]0;owned\u{07}"

    @Test("a JWKS key type with terminal escapes and a huge length is skipped with a clean, bounded reason")
    func hostileKeyType() throws {
        let kty = Self.escape + String(repeating: "A", count: 5000)
        let json = #"{"keys":[{"kty":"\#(kty.replacingOccurrences(of: "\u{1B}", with: "\\u001b").replacingOccurrences(of: "\u{07}", with: "\\u0007"))"}]}"#
        let set = try JWKSet(json: Array(json.utf8))
        let reason = try #require(set.skipped.first)
        #expect(!reason.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(reason.count < 400)
    }

    @Test("a repeated callback parameter's name is sanitized in the error")
    func repeatedParameterName() {
        let error = #expect(throws: OIDCError.self) {
            try FormEncoding.decode("state=S&%1B%5B2J%0Afake=1&%1B%5B2J%0Afake=2")
        }
        #expect(error?.code == .duplicateParameter)
        #expect(!(error?.description.unicodeScalars.contains { $0.properties.generalCategory == .control } ?? true))
    }

    /// Review 3, L3: a token response's `scope` is kept as the provider sent it, and printed raw.
    @Test("a token set's description shows a granted scope with terminal escapes sanitized; the scope itself is kept as sent")
    func scopeInDescription() throws {
        let scope = "openid " + Self.escape + "fake-line \u{9B}31m \u{202E}gnp.exe"
        let body = try JSONSerialization.data(withJSONObject: ["access_token": "at", "token_type": "Bearer", "scope": scope])
        let tokens = try TokenSet(tokenAnswer: Array(body), requestedScopes: [], receivedAt: Date())
        #expect(tokens.scopes.joined(separator: " ") == scope)
        for text in [tokens.description, "\(tokens)", String(describing: StoredLogin(tokens: tokens, issuer: "https://i.example", clientID: "c"))] {
            #expect(!text.unicodeScalars.contains { UntrustedText.isUnsafe($0) }, "\(text)")
        }
        #expect(tokens.description.contains("scopes: openid ?[2J?]0;owned?fake-line ?31m ?gnp.exe"), "\(tokens.description)")
    }

    @Test("print, debugPrint and dump of an HMAC JWK show no secret")
    func hmacKeyRedacted() {
        let key = JWK(hmacSecret: Secret("topsecret-client-value"))
        var dumped = ""
        dump(key, to: &dumped)
        var set = ""
        dump(JWKSet(keys: [key]), to: &set)
        for text in [String(describing: key), String(reflecting: key), dumped, set, "\(key)"] {
            #expect(!text.contains("topsecret"), "\(text)")
            #expect(!text.contains("116, 111, 112"), "\(text)")  // the secret's bytes: "top"
        }
        #expect(String(describing: key).contains("kty: oct"))
    }
}

/// Member names that are canonically equivalent but not byte-equal are one name: refused as a
/// duplicate, so no lookup can pick one value and another the other (issue 13, finding 4).
@Suite("Strict JSON: canonically equivalent member names")
struct EquivalentNamesTests {
    @Test("NFC then NFD spellings of one name are a duplicate, short or long, in small and large objects", arguments: [
        "rôle", "the-rôle-of-this-user",
    ])
    func equivalentNamesRefused(name: String) {
        let nfc = name.precomposedStringWithCanonicalMapping
        let nfd = name.decomposedStringWithCanonicalMapping
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        let small = #"{"\#(nfc)":"user","\#(nfd)":"admin"}"#
        #expect(throws: (any Error).self) { try StrictJSON.parseObject(Array(small.utf8)) }
        let filler = (0..<40).map { #""m\#($0)":0"# }.joined(separator: ",")
        let large = #"{\#(filler),"\#(nfc)":"user","\#(nfd)":"admin"}"#
        #expect(throws: (any Error).self) { try StrictJSON.parseObject(Array(large.utf8)) }
    }

    /// Review 3, L2: a non-ASCII name followed by its ASCII canonical equivalent was accepted, while
    /// the reverse order was refused; Swift then merged the two (the last value won) where
    /// `JSONMembers[...]` returned the first one.
    @Test("a non-ASCII name and its ASCII canonical equivalent are a duplicate in either order, in small and large objects", arguments: [
        ("\u{212A}role", "Krole"),  // KELVIN SIGN, K
        ("x\u{037E}", "x;"),  // GREEK QUESTION MARK, semicolon
        ("\u{1FEF}tick", "`tick"),  // GREEK VARIA, grave accent
        ("the-\u{212A}-role-of-this-user", "the-K-role-of-this-user"),  // longer than a fingerprint
    ])
    func asciiEquivalentInEitherOrder(nonASCII: String, ascii: String) throws {
        #expect(nonASCII == ascii)  // Swift's String equality: canonically equivalent
        #expect(Array(nonASCII.utf8) != Array(ascii.utf8))
        let filler = (0..<40).map { #""m\#($0)":0"# }.joined(separator: ",")
        for (first, second) in [(nonASCII, ascii), (ascii, nonASCII)] {
            let small = #"{"\#(first)":"user","\#(second)":"admin"}"#
            #expect(throws: StrictJSON.ParseError.self, "\(first) then \(second)") { try StrictJSON.parseObject(Array(small.utf8)) }
            #expect(throws: StrictJSON.ParseError.self, "\(first) then \(second)") { try StrictJSON.parseMembers(Array(small.utf8)) }
            let large = #"{\#(filler),"\#(first)":"user","\#(second)":"admin"}"#
            #expect(throws: StrictJSON.ParseError.self, "\(first) then \(second), large") { try StrictJSON.parseObject(Array(large.utf8)) }
            // An earlier non-ASCII name among ASCII ones is remembered, not only the one just before.
            let between = #"{"\#(first)":"user","a":1,"b":2,"\#(second)":"admin"}"#
            #expect(throws: StrictJSON.ParseError.self, "\(first) … \(second)") { try StrictJSON.parseObject(Array(between.utf8)) }
        }
    }

    @Test("ASCII names after a non-ASCII one are still told apart")
    func asciiAfterNonASCIIAccepted() throws {
        let object = try StrictJSON.parseObject(Array(#"{"rôle":"a","role":"b","Krole":"c","krole":"d"}"#.utf8))
        #expect(object.count == 4)
    }

    @Test("distinct non-ASCII names are still accepted")
    func distinctNamesAccepted() throws {
        let object = try StrictJSON.parseObject(Array(#"{"rôle":"a","röle":"b","role":"c"}"#.utf8))
        #expect(object.count == 3)
    }
}
