import Foundation
import OIDC
import OIDCTesting
import Testing

/// `OpenSSLPublicKey` keeps verification contexts per key and scheme (a context failed by a bad
/// signature is dropped, not pooled): one key verifying many tokens at once, good and forged mixed,
/// must judge each one as a fresh context would.
@Suite("Verification contexts reused per key")
struct PooledVerificationTests {
    @Test("one key, 64 concurrent verifications mixing valid, forged-signature and altered-payload tokens: each judged right", arguments: [
        JWSAlgorithm.rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .es256, .es384, .es512, .ed25519,
    ])
    func concurrentMixed(_ algorithm: JWSAlgorithm) async throws {
        let key = try TestSigningKey.generate(algorithm, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let good = try key.sign(claims: standardClaims())
        let parts = good.split(separator: ".").map(String.init)
        let other = try key.sign(claims: standardClaims(["sub": "user-2"])).split(separator: ".").map(String.init)
        // Another token's signature on this payload: a real signature, of the wrong message.
        let forged = parts[0] + "." + parts[1] + "." + other[2]
        let altered = parts[0] + "." + other[1] + "." + parts[2]
        let verifier = verifier { $0.allowedAlgorithms = [algorithm] }
        try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<64 {
                let token = [good, forged, good, altered][index % 4]
                group.addTask { (index, (try? verifier.verify(token, keys: keys, now: testNow)) != nil) }
            }
            for try await (index, accepted) in group {
                #expect(accepted == (index % 2 == 0), "token \(index % 4) with \(algorithm.rawValue)")
            }
        }
        // After the failures, the pooled contexts still verify.
        #expect(try verifier.verify(good, keys: keys, now: testNow).claims.subject == "user-1")
    }
}
