import Foundation
import OIDC
import OIDCTesting
import Testing

/// RFC 9864: `Ed25519` names EdDSA with Ed25519 fully; an Ed25519 key labelled `EdDSA`, `Ed25519` or
/// not at all verifies it, any other key never does, and `Ed448` stays refused.
@Suite("RFC 9864 fully-specified Ed25519")
struct FullySpecifiedAlgorithmTests {
    static func jwks(_ key: TestSigningKey, alg: String?) throws -> JWKSet {
        var jwk = try key.publicJWK(includeAlgorithm: false)
        if let alg { jwk["alg"] = alg }
        return try JWKSet(json: Array(try JSONSerialization.data(withJSONObject: ["keys": [jwk]])))
    }

    @Test("the RFC 8037 A.4 signature verifies as Ed25519 too, with its key labelled either name or unlabelled", arguments: [nil, "EdDSA", "Ed25519"])
    func rfcExampleUnderTheNewName(label: String?) throws {
        let example = try #require(try RFCExampleTests.examples().first { $0.algorithm == .edDSA })
        var jwk = try #require(try JSONSerialization.jsonObject(with: Data(example.jwk.utf8)) as? [String: Any])
        jwk["alg"] = label
        let key = try JWK(json: Array(try JSONSerialization.data(withJSONObject: jwk)))
        for algorithm in [JWSAlgorithm.ed25519, .edDSA] {
            try JWS.verify(signature: example.signature, over: Array(example.signingInput.utf8), with: key, algorithm: algorithm)
        }
    }

    @Test("an Ed25519 ID token verifies with an OKP Ed25519 key labelled EdDSA, Ed25519 or nothing", arguments: [nil, "EdDSA", "Ed25519"])
    func idToken(label: String?) throws {
        let key = try TestSigningKey.generate(.ed25519, keyID: "o")
        let token = try key.sign(claims: standardClaims())
        #expect(try UnverifiedJWT(token).header["alg"] == .string("Ed25519"))
        let verified = try verifier().verify(token, keys: try Self.jwks(key, alg: label), now: testNow)
        #expect(verified.algorithm == .ed25519)
    }

    @Test("Ed25519 is refused with a key of another type, curve or algorithm label")
    func mismatches() throws {
        let ed = try TestSigningKey.generate(.ed25519, keyID: "k")
        let token = try ed.sign(claims: standardClaims())
        // The same key labelled for another algorithm.
        expectRejection(.keyNotFound, token, keys: try Self.jwks(ed, alg: "ES256"))
        // Keys of other types under the token's kid.
        for other in [JWSAlgorithm.es256, .rs256, .ps256] {
            let key = try TestSigningKey.generate(other, keyID: "k")
            let error = #expect(throws: OIDCError.self) { try verifier().verify(token, keys: try Self.jwks(key, alg: nil), now: testNow) }
            #expect(error?.code == .keyNotFound || error?.code == .invalidKey, "\(other)")
        }
        // An OKP key on another curve is not even read.
        let x448 = try JWKSet(json: Array(#"{"keys":[{"kty":"OKP","crv":"Ed448","kid":"k","x":"\#(String(repeating: "A", count: 76))"}]}"#.utf8))
        #expect(x448.keys.isEmpty)
        expectRejection(.keyNotFound, token, keys: x448)
    }

    @Test("Ed448 is refused as an algorithm; discovery may list either Ed25519 name")
    func ed448AndDiscovery() throws {
        let ed = try TestSigningKey.generate(.ed25519, keyID: "k")
        let token = try ed.sign(headerJSON: #"{"alg":"Ed448","kid":"k"}"#, payloadJSON: try TestSigningKeyJSON.text(standardClaims()))
        expectRejection(.algorithmNotAllowed, token, keys: try Self.jwks(ed, alg: nil))
        #expect(JWSAlgorithm(rawValue: "Ed448") == nil)
        for name in ["EdDSA", "Ed25519"] { #expect(JWSAlgorithm(rawValue: name)?.isEdDSAAlgorithm == true) }
        #expect(JWSAlgorithm.asymmetric.contains(.ed25519))
    }
}
