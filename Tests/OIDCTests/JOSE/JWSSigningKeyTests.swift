import Foundation
import OIDC
import Testing

@Suite("JWS signing keys")
struct JWSSigningKeyTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/keys")

    static func pem(_ name: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
    }

    /// Verifies `token` with the key's own public JWK, as a provider would with the registered one.
    static func verifies(_ token: String, with key: JWSSigningKey) throws {
        let jws = try ParsedJWS(token)
        #expect(jws.algorithm == key.algorithm)
        try jws.verifySignature(with: try JWK(members: key.publicJWK))
    }

    @Test("RFC 7520 §4.1 (RS256) and RFC 8037 A.4 (EdDSA) signatures reproduced from the private JWKs; PS384 and ES512 verify")
    func rfcVectors() throws {
        let items = try #require(try Vectors.json("rfc-examples.json")["jws"] as? [[String: Any]])
        var reproduced = 0
        for item in items where item["alg"] as? String != "HS256" {
            let jwk = String(decoding: try JSONSerialization.data(withJSONObject: try #require(item["private_jwk"])), as: UTF8.self)
            let name = try #require(item["alg"] as? String)
            let algorithm = try #require(JWSAlgorithm(rawValue: name))
            let key = try JWSSigningKey(jwk: jwk, algorithm: algorithm)
            let input = Array(try #require(item["signing_input"] as? String).utf8)
            let signature = try key.signature(over: input)
            if item["deterministic"] as? Bool == true {
                #expect(Base64URL.encode(signature) == item["signature_b64u"] as? String, "\(item["id"] ?? "")")
                reproduced += 1
            }
            let publicJWK = String(decoding: try JSONSerialization.data(withJSONObject: try #require(item["jwk"])), as: UTF8.self)
            try JWS.verify(signature: signature, over: input, with: try JWK(json: publicJWK), algorithm: algorithm)
        }
        #expect(reproduced == 2)
    }

    @Test("PEM in PKCS#1, SEC1 and PKCS#8: the algorithm follows the key; a given kid goes in the header")
    func pemForms() throws {
        let cases: [(String, JWSAlgorithm)] = [
            ("rsa-pkcs1.pem", .rs256), ("ec-p256-sec1.pem", .es256), ("ec-p384-pkcs8.pem", .es384), ("ed25519-pkcs8.pem", .edDSA),
        ]
        for (file, algorithm) in cases {
            let key = try JWSSigningKey(pem: try Self.pem(file), keyID: "k-\(file)")
            #expect(key.algorithm == algorithm, "\(file)")
            let token = try key.sign(claims: ["sub": "me", "n": 1], type: "JWT")
            try Self.verifies(token, with: key)
            let header = try UnverifiedJWT(token).header
            #expect(header["kid"] == .string("k-\(file)") && header["typ"] == "JWT")
        }
        let pss = try JWSSigningKey(pem: try Self.pem("rsa-pkcs1.pem"), algorithm: .ps256)
        try Self.verifies(try pss.sign(claims: ["sub": "me"]), with: pss)
    }

    @Test("refused: a 1024-bit RSA key, an algorithm of another key type or curve, HMAC, text that is no key, a private JWK whose parts do not match")
    func refusals() throws {
        for (attempt, name) in [
            ({ _ = try JWSSigningKey(pem: try Self.pem("rsa-1024-pkcs1.pem")) }, "1024-bit RSA"),
            ({ _ = try JWSSigningKey(pem: try Self.pem("ec-p256-sec1.pem"), algorithm: .es384) }, "P-256 key for ES384"),
            ({ _ = try JWSSigningKey(pem: try Self.pem("rsa-pkcs1.pem"), algorithm: .es256) }, "RSA key for ES256"),
            ({ _ = try JWSSigningKey(pem: try Self.pem("rsa-pkcs1.pem"), algorithm: .hs256) }, "HS256"),
            ({ _ = try JWSSigningKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }, "garbage"),
            ({ _ = try JWSSigningKey(jwk: #"{"kty":"EC","crv":"P-256","x":"AA","y":"AA","d":"AA"}"#) }, "short EC JWK"),
            ({ _ = try JWSSigningKey(jwk: #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#) }, "OKP x of another d"),
            ({ _ = try JWSSigningKey(jwk: #"{"kty":"oct","k":"AAAA"}"#) }, "oct JWK"),
        ] as [(() throws -> Void, String)] {
            let error = #expect(throws: OIDCError.self, "\(name)") { try attempt() }
            #expect(error?.code == .invalidKey, "\(name): \(String(describing: error))")
        }
    }

    @Test("a key file is read as the store reads its files: another user's mode bits refuse it; JWK files work too")
    func keyFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("client.pem").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(try Self.pem("ec-p256-sec1.pem").utf8), attributes: [.posixPermissions: 0o644]))
        let refused = #expect(throws: OIDCError.self) { try JWSSigningKey(contentsOfFile: path) }
        #expect(refused?.message.contains("chmod 600") == true)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try JWSSigningKey(contentsOfFile: path).algorithm == .es256)

        let generated = try JWSSigningKey.generate(.es256, keyID: "made")
        #expect(generated.publicJWK["d"] == nil && generated.publicJWK["kid"] == "made")  // no private part
        let missing = #expect(throws: OIDCError.self) { try JWSSigningKey(contentsOfFile: directory.appendingPathComponent("none").path) }
        #expect(missing?.code == .invalidArgument)
    }

    @Test("RFC 7638 thumbprint; a key prints its algorithm and kid, never key material")
    func thumbprintAndDescription() throws {
        // RFC 8037 A.3: the thumbprint of the Ed25519 example key.
        let key = try JWSSigningKey(jwk: #"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"ed"}"#)
        #expect(try key.thumbprint() == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
        #expect(key.keyID == "ed" && key.algorithm == .edDSA)
        #expect(key.description == "JWSSigningKey(EdDSA, kid: ed)")
        #expect(!"\(key)".contains("nWGxne"))
    }

    @Test("without a kid given, the kid is the key's RFC 7638 thumbprint, in the header and the public JWK; a given kid and a JWK's own come first")
    func thumbprintIsTheDefaultKeyID() throws {
        for file in ["rsa-pkcs1.pem", "ec-p256-sec1.pem", "ed25519-pkcs8.pem"] {
            let key = try JWSSigningKey(pem: try Self.pem(file))
            let thumbprint = try key.thumbprint()
            #expect(key.keyID == thumbprint, "\(file)")
            #expect(key.publicJWK["kid"] == .string(thumbprint))
            #expect(try UnverifiedJWT(try key.sign(claims: ["sub": "me"])).header["kid"] == .string(thumbprint))
            #expect(try JWSSigningKey(pem: try Self.pem(file), keyID: "given").keyID == "given")
        }
        // RFC 8037 A.3's key: without kid, its thumbprint; with one, its own.
        let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", d = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
        let bare = try JWSSigningKey(jwk: #"{"kty":"OKP","crv":"Ed25519","d":"\#(d)","x":"\#(x)"}"#)
        #expect(bare.keyID == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
        #expect(try JWSSigningKey(jwk: #"{"kty":"OKP","crv":"Ed25519","d":"\#(d)","x":"\#(x)","kid":"own"}"#).keyID == "own")
        let generated = try JWSSigningKey.generate(.es256)
        #expect(generated.keyID == (try generated.thumbprint()))
    }
}
