import Foundation
import OIDC
import OIDCTesting
import Testing

/// A bounded random-mutation fuzz run over the verifier's inputs: tokens (bytes flipped, inserted,
/// deleted, segments swapped, header and claims JSON mutated then re-signed) and JWKS documents. Every
/// input must end in a verified token or a typed `OIDCError`: no crash, no hang, no other error. The
/// seed is fixed so a failure reproduces; `OIDC_FUZZ_ITERATIONS` makes the run longer.
@Suite("Mutation fuzzing of tokens and JWKS")
struct MutationFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["OIDC_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 4_000

    /// SplitMix64: small, fast, reproducible.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Bytes that matter to the parsers: JSON syntax, base64url alphabet edges, dots, escapes, UTF-8.
    static let interesting: [UInt8] = Array(#"{}[]",:.\-_=+/ 0123456789eE"#.utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xA4, 0xF0, 0xFF, 0x0A]
    static let fragments = [
        #""alg":"none""#, #""crit":["b64"]"#, #""kid":"k1","kid":"k2""#, "1e400", "-0", "\\u0000", "\\ud800", "[[[[[[[[",
        #""exp":"soon""#, #""aud":[]"#, "null", "true", "9999999999999999999999",
    ]

    static func mutate(_ input: [UInt8], using random: inout Random) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1: bytes.insert(interesting.randomElement(using: &random)!, at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            case 3 where !bytes.isEmpty: bytes[position] = interesting.randomElement(using: &random)!
            case 4: bytes.insert(contentsOf: fragments.randomElement(using: &random)!.utf8, at: position)
            default:
                let end = min(bytes.count, position + Int.random(in: 0...32, using: &random))
                bytes.replaceSubrange(position..<end, with: bytes[position..<end].reversed())
            }
        }
        return bytes
    }

    @Test("mutated tokens end in a verified token or a typed rejection", arguments: [JWSAlgorithm.rs256, .es256, .edDSA, .ed25519])
    func tokens(algorithm: JWSAlgorithm) async throws {
        let key = try TestSigningKey.generate(algorithm, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let header = #"{"alg":"\#(algorithm.rawValue)","kid":"k1","typ":"JWT"}"#
        let claims = #"{"iss":"https://idp.example","sub":"user-1","aud":["client-1","x"],"azp":"client-1","exp":1800000600,"iat":1799999990,"nonce":"nonce-1","amr":["pwd"],"nested":{"a":[1,2.5,-3e2,true,null,"\u00e4"]}}"#
        let valid = try key.sign(headerJSON: header, payloadJSON: claims)
        var verifier = IDTokenVerifier(issuer: "https://idp.example", clientID: "client-1", nonce: .expected("nonce-1"))
        verifier.requiredAMRValues = ["pwd"]
        var random = Random(state: 0x5EED_0000 + UInt64(algorithm.rawValue.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
        var accepted = 0, rejected = 0
        for round in 0..<Self.iterations {
            // CPU-bound: let the in-process servers of other tests run (they share the cooperative pool).
            if round % 64 == 0 { await Task.yield() }
            let input: String
            switch round % 3 {
            case 0:  // raw token bytes
                input = String(decoding: Self.mutate(Array(valid.utf8), using: &random), as: UTF8.self)
            case 1:  // header JSON mutated, then signed for real, so the parsers past the signature are reached too
                input = try key.sign(headerJSON: String(decoding: Self.mutate(Array(header.utf8), using: &random), as: UTF8.self), payloadJSON: claims)
            default:  // claims JSON mutated and signed
                input = try key.sign(headerJSON: header, payloadJSON: String(decoding: Self.mutate(Array(claims.utf8), using: &random), as: UTF8.self))
            }
            do {
                _ = try verifier.verify(input, keys: keys, now: Date(timeIntervalSince1970: 1_800_000_000))
                accepted += 1
            } catch {
                #expect(!error.message.isEmpty)
                rejected += 1
            }
            _ = try? UnverifiedJWT(input)
        }
        #expect(accepted + rejected == Self.iterations)
        #expect(rejected > Self.iterations / 2)  // mutations do get rejected: the run is not a no-op
    }

    @Test("mutated JWKS documents parse or are refused with a typed error")
    func jwks() async throws {
        var members: [[String: Any]] = []
        for (algorithm, id) in [(JWSAlgorithm.rs256, "r"), (.es256, "e"), (.es384, "e3"), (.es512, "e5"), (.edDSA, "o"), (.ed25519, "o2")] {
            members.append(try TestSigningKey.generate(algorithm, keyID: id).publicJWK(extra: ["key_ops": ["verify"]]))
        }
        let document = Array(try JSONSerialization.data(withJSONObject: ["keys": members], options: [.sortedKeys]))
        var random = Random(state: 0x0DD_BA11)
        var parsedKeys = 0
        for round in 0..<Self.iterations {
            if round % 64 == 0 { await Task.yield() }
            do { parsedKeys += try JWKSet(json: Self.mutate(document, using: &random)).keys.count } catch {
                #expect(error.code == .invalidKey)
            }
        }
        #expect(parsedKeys > 0)
    }
}
