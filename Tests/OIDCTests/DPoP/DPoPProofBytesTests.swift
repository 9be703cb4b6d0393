import Foundation
@testable import OIDC
import Testing

/// The proof's bytes after its hot path was made cheaper (run-copying string escapes, `ath` kept per
/// token): the same bytes as the per-byte writer before it, for hostile strings, and the right
/// `ath` whichever token came before.
@Suite("DPoP proof bytes: escaping by runs, ath per token")
struct DPoPProofBytesTests {
    /// The writer as it was before (one byte at a time): the reference the new one must equal.
    static func referenceQuoted(_ text: String) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = [0x22]
        for byte in text.utf8 {
            switch byte {
            case 0x22: bytes += [0x5C, 0x22]
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
            case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
            case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
            case 0x08: bytes += [0x5C, UInt8(ascii: "b")]
            case 0x0C: bytes += [0x5C, UInt8(ascii: "f")]
            case 0..<0x20: bytes += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: bytes.append(byte)
            }
        }
        return bytes + [0x22]
    }

    /// Quotes, backslashes and controls at the start, the end and side by side; text outside ASCII
    /// (two-, three- and four-byte UTF-8, U+2028); every ASCII character; long clean runs.
    static let hostile: [String] = [
        "", "a", "\"", "\\", "\u{00}", "\u{1F}", "\"\"", "\\\\\"", "\n\r\t\u{08}\u{0C}", "\u{01}x\u{1F}", "x\"", "\"x",
        "caf\u{E9} \u{2713} \u{1D11E} \u{2028}\u{2029} \u{7F}", "https://api.example/p\u{E4}th/\"q\"\\", String(repeating: "clean-run_", count: 80),
        String(String.UnicodeScalarView((0..<0x80).compactMap(Unicode.Scalar.init))),
        String(repeating: "\u{E9}\"\\\u{01}", count: 50),
    ]

    @Test("JSONString writes hostile strings byte for byte as the per-byte writer did, whatever precedes them in the buffer")
    func escapingMatchesReference() {
        var generator = DPoPProofBytesRandom(seed: 0x9449)
        let alphabet: [Unicode.Scalar] = ["a", "Z", "/", "\"", "\\", "\u{00}", "\u{08}", "\u{0A}", "\u{1B}", "\u{1F}", " ", "\u{E9}", "\u{2028}", "\u{1F600}"]
        let random = (0..<200).map { _ in
            String(String.UnicodeScalarView((0..<Int(generator.next() % 40)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }))
        }
        for text in Self.hostile + random {
            #expect(Array(JSONString.quoted(text).utf8) == Self.referenceQuoted(text), "\(text.debugDescription)")
            var bytes = Array("prefix,".utf8)
            JSONString.append(text, to: &bytes)
            #expect(bytes == Array("prefix,".utf8) + Self.referenceQuoted(text))
        }
    }

    @Test("a proof's claims are the previous form's bytes: members in order, hostile htm and a non-ASCII, quoted htu path escaped the same way")
    func claimsBytesMatchReference() throws {
        let key = try DPoPKey.generate()
        let token = Secret("tok\"en\\with-odd-bytes")
        for method in ["GET", "M\"\\\u{01}\n\t\u{E9}", "\u{1F}\u{00}"] {
            for url in [URL(string: "https://api.example/caf%C3%A9/x?q=1")!, URL(string: "https://api.example/p\u{E4}th/\"a\"")!] {
                let proof = try key.proof(method: method, url: url, accessToken: token, nonce: "n-0S6_WzA2Mj!#$%&'()*+", now: Date(timeIntervalSince1970: 1_800_000_000.5))
                let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
                #expect(parts.count == 3)
                let payload = try #require(Base64URLEncoding.decode(String(parts[1])))
                let jti = try #require(try DPoPKeyTests.parts(proof).claims["jti"]?.stringValue)
                var expected: [UInt8] = Array("{\"jti\":".utf8) + Self.referenceQuoted(jti)
                expected += Array(",\"htm\":".utf8) + Self.referenceQuoted(method)
                expected += Array(",\"htu\":".utf8) + Self.referenceQuoted(try DPoPKey.target(of: url))
                expected += Array(",\"iat\":1800000000,\"ath\":".utf8) + Self.referenceQuoted(Base64URLEncoding.encode(try LibCrypto.sha256(Array(token.revealedValue.utf8))))
                expected += Array(",\"nonce\":".utf8) + Self.referenceQuoted("n-0S6_WzA2Mj!#$%&'()*+") + [UInt8(ascii: "}")]
                #expect(payload == expected, "\(String(decoding: payload, as: UTF8.self))")
                #expect(try JSONSerialization.jsonObject(with: Data(payload)) is [String: Any])
            }
        }
    }

    @Test("ath is SHA-256 of the token each proof carries, when tokens alternate, for copies of the key, and from many tasks at once")
    func accessTokenHashPerToken() async throws {
        let key = try DPoPKey.generate()
        let copy = key
        let url = URL(string: "https://api.example/r")!
        func ath(_ token: String) throws -> String { Base64URLEncoding.encode(try LibCrypto.sha256(Array(token.utf8))) }
        for token in ["first", "second", "first", "first", String(repeating: "x", count: 800), "second"] {
            for signer in [key, copy] {
                let claims = try DPoPKeyTests.parts(try signer.proof(method: "GET", url: url, accessToken: Secret(token))).claims
                #expect(claims["ath"]?.stringValue == (try ath(token)))
            }
        }
        #expect(try DPoPKeyTests.parts(try key.proof(method: "GET", url: url)).claims["ath"] == nil)
        // The kept token is never shown: not by the key's description, nor by a reflection of it.
        _ = try key.proof(method: "GET", url: url, accessToken: Secret("kept-token-VALUE-7f3a"))
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("kept-token-VALUE-7f3a") && !"\(key)".contains("kept-token-VALUE-7f3a") && !String(reflecting: key).contains("kept-token-VALUE-7f3a"))
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<50 {
                        let token = "token-\((task + round) % 3)"
                        let claims = try DPoPKeyTests.parts(try key.proof(method: "GET", url: url, accessToken: Secret(token))).claims
                        if claims["ath"]?.stringValue != (try ath(token)) { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}

/// A small deterministic generator (DPoPProofBytesRandom64), so the random strings are the same every run.
struct DPoPProofBytesRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1334_11EB
        return z ^ (z >> 31)
    }
}
