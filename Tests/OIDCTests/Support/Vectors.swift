import Foundation
import Testing

/// Test vectors shipped in `Tests/Vectors` (see its README for provenance and licences).
enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors")

    static func json(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    struct PKCEExample: Sendable {
        let verifierOctets: [UInt8]
        let verifier: String
        let sha256: [UInt8]
        let challenge: String
    }

    static func pkceExamples() throws -> [PKCEExample] {
        let items = try #require(try json("rfc-examples.json")["pkce"] as? [[String: Any]])
        return try items.map { item in
            PKCEExample(
                verifierOctets: try #require(item["code_verifier_octets"] as? [Int]).map(UInt8.init),
                verifier: try #require(item["code_verifier"] as? String),
                sha256: try #require(item["sha256_octets"] as? [Int]).map(UInt8.init),
                challenge: try #require(item["code_challenge"] as? String)
            )
        }
    }
}
