import Foundation
import OIDC
import OIDCTesting
import Testing

@Suite("Token minting with libjwt")
struct TokenMinterTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func pem(_ name: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
    }

    struct Parts {
        let header: [String: Any]
        let claims: [String: Any]
        let signingInput: String
        let signature: [UInt8]
    }

    static func split(_ token: String) throws -> Parts {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(segments.count == 3)
        func object(_ segment: Substring) throws -> [String: Any] {
            let bytes = try #require(Base64URL.decode(String(segment)))
            return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        }
        return Parts(
            header: try object(segments[0]), claims: try object(segments[1]),
            signingInput: "\(segments[0]).\(segments[1])", signature: try #require(Base64URL.decode(String(segments[2])))
        )
    }

    @Test("HS256/384/512 tokens carry the HMAC OpenSSL computes over the signing input", arguments: [
        (TokenMinter.Algorithm.hs256, "SHA256", 32), (.hs384, "SHA384", 48), (.hs512, "SHA512", 64),
    ])
    func hmac(algorithm: TokenMinter.Algorithm, digest: String, length: Int) throws {
        let secret = "a-client-secret-of-at-least-32-bytes!!"
        let token = try TokenMinter(algorithm: algorithm, key: secret).mint(
            claimsJSON: #"{"iss":"https://idp.example","sub":"u1","aud":"c","exp":2000000000}"#, headers: ["kid": "k1"]
        )
        let parts = try Self.split(token)
        #expect(parts.header["alg"] as? String == algorithm.rawValue)
        #expect(parts.header["kid"] as? String == "k1")
        #expect(parts.claims["sub"] as? String == "u1")
        #expect(parts.claims["exp"] as? Int == 2_000_000_000)
        let expected = try LibCrypto.hmac(digest: digest, key: Array(secret.utf8), data: Array(parts.signingInput.utf8))
        #expect(expected.count == length)
        #expect(parts.signature == expected)
        let wrongKey = try LibCrypto.hmac(digest: digest, key: Array("another".utf8), data: Array(parts.signingInput.utf8))
        #expect(parts.signature != wrongKey)
    }

    @Test("RS256 tokens from a PEM key are well-formed, 256-byte and deterministic")
    func rsa() throws {
        let minter = TokenMinter(algorithm: .rs256, key: try Self.pem("rsa-2048-test.pem"))
        let claims = #"{"sub":"u1","nonce":"n-1"}"#
        let token = try minter.mint(claimsJSON: claims, headers: ["kid": "rsa-1"])
        let parts = try Self.split(token)
        #expect(parts.header["alg"] as? String == "RS256")
        #expect(parts.claims["nonce"] as? String == "n-1")
        #expect(parts.signature.count == 256)
        #expect(try minter.mint(claimsJSON: claims, headers: ["kid": "rsa-1"]) == token)  // PKCS#1 v1.5 is deterministic
    }

    @Test("ES256 tokens carry a raw 64-byte r‖s signature, as JWS requires")
    func ecdsa() throws {
        let token = try TokenMinter(algorithm: .es256, key: try Self.pem("ec-p256-test.pem")).mint(claimsJSON: #"{"sub":"u1"}"#)
        let parts = try Self.split(token)
        #expect(parts.header["alg"] as? String == "ES256")
        #expect(parts.signature.count == 64)
    }

    @Test("a wrong key type or malformed claims give an error, not a crash")
    func errors() throws {
        #expect(throws: TokenMinter.MintError.self) {
            try TokenMinter(algorithm: .rs256, key: "not a pem").mint(claimsJSON: "{}")
        }
        #expect(throws: TokenMinter.MintError.self) {
            try TokenMinter(algorithm: .hs256, key: "secret").mint(claimsJSON: "[1, 2]")
        }
        #expect(throws: TokenMinter.MintError.self) {
            try TokenMinter(algorithm: .es256, key: try Self.pem("rsa-2048-test.pem")).mint(claimsJSON: "{}")
        }
    }
}
