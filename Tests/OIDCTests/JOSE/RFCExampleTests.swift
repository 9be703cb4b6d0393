import Foundation
import OIDC
import Testing

/// RFC 7520 §4.1–4.4 and RFC 8037 A.4 JWS examples (Tests/Vectors/rfc-examples.json).
@Suite("RFC 7520 and RFC 8037 JWS examples")
struct RFCExampleTests {
    struct Example: Sendable, CustomStringConvertible {
        let id: String
        let algorithm: JWSAlgorithm
        let jwk: String
        let signingInput: String
        let signature: [UInt8]
        var description: String { id }
    }

    static func examples() throws -> [Example] {
        let items = try #require(try Vectors.json("rfc-examples.json")["jws"] as? [[String: Any]])
        return try items.map { item in
            let jwkData = try JSONSerialization.data(withJSONObject: try #require(item["jwk"]))
            let alg = try #require(item["alg"] as? String)
            let signature = try #require(item["signature_b64u"] as? String)
            return Example(
                id: try #require(item["id"] as? String),
                algorithm: try #require(JWSAlgorithm(rawValue: alg)),
                jwk: String(decoding: jwkData, as: UTF8.self),
                signingInput: try #require(item["signing_input"] as? String),
                signature: try #require(Base64URL.decode(signature))
            )
        }
    }

    @Test("every example verifies with its key, and fails with one flipped bit")
    func verify() throws {
        let examples = try Self.examples()
        #expect(Set(examples.map(\.algorithm)) == [.rs256, .ps384, .es512, .hs256, .edDSA])
        for example in examples {
            let key = try JWK(json: example.jwk)
            try JWS.verify(signature: example.signature, over: Array(example.signingInput.utf8), with: key, algorithm: example.algorithm)
            var flipped = example.signature
            flipped[flipped.count / 2] ^= 0x01
            #expect(throws: OIDCError.self, "\(example.id)") {
                try JWS.verify(signature: flipped, over: Array(example.signingInput.utf8), with: key, algorithm: example.algorithm)
            }
            #expect(throws: OIDCError.self, "\(example.id): truncated") {
                try JWS.verify(signature: Array(example.signature.dropLast()), over: Array(example.signingInput.utf8), with: key, algorithm: example.algorithm)
            }
        }
    }

    @Test("a key never verifies an algorithm of another family or curve")
    func keyAlgorithmMatching() throws {
        for example in try Self.examples() {
            let key = try JWK(json: example.jwk)
            for other in JWSAlgorithm.allCases where other.jwkKeyType != example.algorithm.jwkKeyType || other.jwkCurve != example.algorithm.jwkCurve {
                guard other.jwkKeyType != example.algorithm.jwkKeyType || example.algorithm.jwkCurve != nil else { continue }
                let error = #expect(throws: OIDCError.self, "\(example.id) with \(other)") {
                    try JWS.verify(signature: example.signature, over: Array(example.signingInput.utf8), with: key, algorithm: other)
                }
                #expect(error?.code == .invalidKey || error?.code == .invalidSignature)
            }
        }
    }
}
