import Foundation
import OIDC
import Testing

/// RFC 7519's NumericDate, read one way: the same inputs give the same verdict in the shared reader
/// and in each token reader that uses it (ID token claims, introspection answers).
@Suite("NumericDate: one reader for every token")
struct NumericDateTests {
    @Test("numbers of seconds within the years 1 to 9999 are dates; anything else is not", arguments: [
        ("0", 0.0), ("1.5", 1.5), ("1800000600", 1_800_000_600), ("253402300799", 253_402_300_799), ("-62135596800", -62_135_596_800),
    ])
    func dates(text: String, seconds: Double) throws {
        let value = try StrictJSONParser.parse(Array(text.utf8))
        #expect(NumericDate.seconds(value) == seconds)
        let answer = try TokenIntrospection(answer: Array(#"{"active":true,"exp":\#(text)}"#.utf8))
        #expect(answer.expiresAt == Date(timeIntervalSince1970: seconds))
    }

    @Test("a string, a boolean, an object and a date past 9999 or before the year 1 are refused by every reader (null is no date either)", arguments: [
        #""1800000600""#, "true", "{}", "253402300800", "-62135596801", "-1e300",
    ])
    func notDates(text: String) throws {
        let value = try StrictJSONParser.parse(Array(text.utf8))
        #expect(NumericDate.seconds(value) == nil)
        #expect(NumericDate.seconds(nil) == nil && NumericDate.seconds(.null) == nil)
        let error = #expect(throws: OIDCError.self) { try TokenIntrospection(answer: Array(#"{"active":true,"exp":\#(text)}"#.utf8)) }
        #expect(error?.message.contains(NumericDate.rule) == true, "\(String(describing: error))")
        let claims = #"{"iss":"https://idp.example","sub":"u","aud":"client-1","exp":1800000600,"iat":\#(text)}"#
        let idToken = #expect(throws: OIDCError.self) { try IDTokenClaims(payload: Array(claims.utf8)) }
        #expect(idToken?.message.contains(NumericDate.rule) == true, "\(String(describing: idToken))")
    }
}
