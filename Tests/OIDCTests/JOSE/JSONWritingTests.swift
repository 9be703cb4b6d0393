import Foundation
@testable import OIDC
import Testing

@Suite("JSON written once: strings escaped one way, members read by one set of rules")
struct JSONWritingTests {
    /// Every control character, the two that must be escaped, `/`, and text outside ASCII.
    static let hardText = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init))) + "\"\\/ é ✓ 𝄞 \u{7F}"

    @Test("JSONString: RFC 8259's escapes (short forms, \\u00xx in lower case, / kept), read back exactly by the strict parser")
    func stringEscaping() throws {
        #expect(JSONString.quoted("a\"b\\c/d\n\r\t\u{08}\u{0C}\u{01}\u{1F}") == #""a\"b\\c/d\n\r\t\b\f\u0001\u001f""#)
        let quoted = JSONString.quoted(Self.hardText)
        #expect(try StrictJSONParser.parse(Array(quoted.utf8)) == .string(Self.hardText))
        #expect(!quoted.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("jsonText and the DPoP proof's object bytes write a string as JSONString does")
    func writersAgree() {
        let quoted = JSONString.quoted(Self.hardText)
        #expect(JSONValue.string(Self.hardText).jsonText == quoted)
        #expect(JSONValue.object([Self.hardText: .string(Self.hardText)]).jsonText == "{\(quoted):\(quoted)}")
        var object = JSONObjectBytes()
        object.add("k", Self.hardText)
        #expect(String(decoding: object.closed(), as: UTF8.self) == "{\"k\":\(quoted)}")
    }

    static func reader(_ json: String) throws -> JSONObjectReader {
        JSONObjectReader(try StrictJSONParser.parseObject(Array(json.utf8)), document: "The answer")
    }

    @Test("seconds: a number, or a string holding one (spaces ignored); absent or null is nil", arguments: [
        (#"{"s":60}"#, 60.0), (#"{"s":"60"}"#, 60), (#"{"s":" 60 "}"#, 60), (#"{"s":1.5}"#, 1.5), (#"{"s":0}"#, 0), (#"{"s":"0.25"}"#, 0.25),
    ])
    func secondsRead(json: String, seconds: Double) throws {
        #expect(try Self.reader(json).seconds("s") == seconds)
    }

    @Test("seconds: negative, not finite, too large, not a number: malformedResponse naming the member, not its value", arguments: [
        #"{"s":-1}"#, #"{"s":"-1"}"#, #"{"s":1e10}"#, #"{"s":"nan"}"#, #"{"s":"inf"}"#, #"{"s":"sixty-secret"}"#, #"{"s":true}"#, #"{"s":[60]}"#,
        #"{"s":""}"#,
    ])
    func secondsRefused(json: String) throws {
        let error = #expect(throws: OIDCError.self) { try Self.reader(json).seconds("s") }
        #expect(error?.code == .malformedResponse)
        #expect(error?.message == "The answer member 's' must be a number of seconds.")
    }

    @Test("absent and null members read as nil; wholeSeconds wants a JSON integer of at least 1 (RFC 9126 §2.2)")
    func absentAndWhole() throws {
        let reader = try Self.reader(#"{"n":null,"w":60,"f":1.5,"q":"60","z":0,"t":"x","l":["a",1],"e":""}"#)
        #expect(try reader.seconds("n") == nil && reader.seconds("missing") == nil && reader.string("n") == nil)
        #expect(try reader.wholeSeconds("w") == 60 && reader.wholeSeconds("n") == nil)
        for name in ["f", "q", "z"] {
            #expect(throws: OIDCError.self, "\(name)") { try reader.wholeSeconds(name) }
        }
        #expect(try reader.string("t") == "x")
        #expect(throws: OIDCError.self) { try reader.string("w") }
        #expect(throws: OIDCError.self) { try reader.strings("l") }
        #expect(throws: OIDCError.self) { try reader.nonEmptyString("e") }
    }
}
