import Foundation
import OIDC
import Testing

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(hex.utf8.count / 2)
    var iterator = hex.utf8.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
    }
    return bytes
}

/// Project Wycheproof vectors (Apache-2.0, Tests/Vectors/wycheproof) through the low-level API.
@Suite("Wycheproof signature vectors")
struct WycheproofTests {
    struct Outcome {
        var valid = 0, invalid = 0, acceptable = 0
        var failures: [String] = []
    }

    static func run(file: String, algorithm: JWSAlgorithm) throws -> Outcome {
        let document = try Vectors.json("wycheproof/\(file)")
        let groups = try #require(document["testGroups"] as? [[String: Any]])
        var outcome = Outcome()
        for group in groups {
            let key = try JWK(members: jwkObject(group))
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let id = test["tcId"] as? Int ?? -1
                let result = try #require(test["result"] as? String)
                let message = hexBytes(try #require(test["msg"] as? String))
                let signature = hexBytes(try #require(test["sig"] as? String))
                let accepted = (try? JWS.verify(signature: signature, over: message, with: key, algorithm: algorithm)) != nil
                switch result {
                case "valid":
                    outcome.valid += 1
                    if !accepted { outcome.failures.append("tcId \(id): valid signature rejected") }
                case "invalid":
                    outcome.invalid += 1
                    if accepted { outcome.failures.append("tcId \(id): invalid signature accepted (\(test["comment"] ?? ""))") }
                default:
                    outcome.acceptable += 1
                }
            }
        }
        return outcome
    }

    /// The group's JWK; for the ECDSA groups without one, built from `wx`/`wy` padded or trimmed to 32 bytes.
    static func jwkObject(_ group: [String: Any]) throws -> [String: JSONValue] {
        if let jwk = (group["publicKeyJwk"] ?? group["keyJwk"]) as? [String: Any] {
            let data = try JSONSerialization.data(withJSONObject: jwk)
            return try StrictJSON.parseObject(Array(data))
        }
        let publicKey = try #require(group["publicKey"] as? [String: Any])
        func coordinate(_ name: String) throws -> String {
            var bytes = hexBytes(try #require(publicKey[name] as? String))
            while bytes.count > 32, bytes.first == 0 { bytes.removeFirst() }
            bytes = [UInt8](repeating: 0, count: max(0, 32 - bytes.count)) + bytes
            return Base64URL.encode(bytes)
        }
        return ["kty": .string("EC"), "crv": .string("P-256"), "x": .string(try coordinate("wx")), "y": .string(try coordinate("wy"))]
    }

    @Test("RS256: RSASSA-PKCS1-v1_5 SHA-256, 2048-bit keys")
    func rs256() throws {
        let outcome = try Self.run(file: "rsa_signature_2048_sha256_test.json", algorithm: .rs256)
        #expect(outcome.failures == [])
        #expect(outcome.valid == 9 && outcome.invalid == 249 && outcome.acceptable == 1)
    }

    @Test("PS256: RSASSA-PSS SHA-256, MGF1-SHA-256, 32-byte salt")
    func ps256() throws {
        let outcome = try Self.run(file: "rsa_pss_2048_sha256_mgf1_32_test.json", algorithm: .ps256)
        #expect(outcome.failures == [])
        #expect(outcome.valid == 63 && outcome.invalid == 45)
    }

    @Test("ES256: ECDSA P-256 SHA-256 with raw r‖s signatures")
    func es256() throws {
        let outcome = try Self.run(file: "ecdsa_secp256r1_sha256_p1363_test.json", algorithm: .es256)
        #expect(outcome.failures == [])
        #expect(outcome.valid == 173 && outcome.invalid == 89)
    }
}
