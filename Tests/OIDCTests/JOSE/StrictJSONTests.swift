import Foundation
import OIDC
import Testing

@Suite("Strict JSON reader")
struct StrictJSONTests {
    func parse(_ text: String) throws -> JSONValue { try StrictJSON.parse(Array(text.utf8)) }

    @Test("values of every kind")
    func values() throws {
        let value = try parse(#" { "s": "a\"b\\c\/d\u00e9\ud83d\ude00\n", "n": -12.5e2, "i": 1700000000, "z": 0, "t": true, "f": false, "x": null, "a": [1, [2], {}], "o": {"k": "v"} } "#)
        let object = try #require(value.objectValue)
        #expect(object["s"] == .string("a\"b\\c/dé😀\n"))
        #expect(object["n"] == .number(-1250))
        #expect(object["i"] == .number(1_700_000_000))
        #expect(object["z"] == .number(0))
        #expect(object["t"] == .bool(true) && object["f"] == .bool(false) && object["x"] == .null)
        #expect(object["a"] == .array([.number(1), .array([.number(2)]), .object([:])]))
        #expect(object["o"] == .object(["k": .string("v")]))
    }

    @Test("malformed documents are refused with a reason", arguments: [
        #"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":1}}"#, #"{"a":1,"\u0061":2}"#, #"{"auth_time":1,"auth_tim\u0065":2}"#,
        #"{"auth_time":1,"auth_timf":2,"auth_time":3}"#, "{", "}", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, "[1,]", "01", "1.",
        ".5", "-", "1e", "+1", "NaN", "Infinity", "1e400", "-1e400", #""\x""#, #""\u12""#, #""\ud800""#, #""\udc00""#,
        "\"a\u{01}b\"", "tru", "nul", "{} {}", "{}x", "", " ", #"{"a":1 "b":2}"#, "[1 2]", "'a'",
    ])
    func malformed(text: String) {
        #expect(throws: StrictJSON.ParseError.self) { try parse(text) }
    }

    @Test("invalid UTF-8 is refused")
    func invalidUTF8() {
        #expect(throws: StrictJSON.ParseError.self) { try StrictJSON.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: StrictJSON.ParseError.self) { try StrictJSON.parse([0x22, 0xFF, 0x22]) }
    }

    @Test("nesting is bounded, without exhausting the stack")
    func depth() throws {
        _ = try parse(String(repeating: "[", count: 32) + String(repeating: "]", count: 32))
        #expect(throws: StrictJSON.ParseError.self) { try parse(String(repeating: "[", count: 33) + String(repeating: "]", count: 33)) }
        #expect(throws: StrictJSON.ParseError.self) { try parse(String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)) }
    }

    @Test("names sharing a length and first bytes are told apart; duplicates are found in large objects too")
    func lookalikeNames() throws {
        let object = try #require(try parse(#"{"auth_time":1,"auth_timf":2,"a":3,"b":4}"#).objectValue)
        #expect(object.count == 4 && object["auth_timf"] == .number(2))
        let many = (0..<100).map { #""m\#($0)":\#($0)"# }
        _ = try parse("{" + many.joined(separator: ",") + "}")
        #expect(throws: StrictJSON.ParseError.self) { try parse("{" + (many + [#""m57":0"#]).joined(separator: ",") + "}") }
        #expect(throws: StrictJSON.ParseError.self) { try parse("{" + (many + [#""m\u0035\u0037":0"#]).joined(separator: ",") + "}") }
    }

    @Test("parseObject wants an object")
    func objectOnly() {
        #expect(throws: StrictJSON.ParseError.self) { try StrictJSON.parseObject(Array("[1]".utf8)) }
    }
}
