import Foundation
import OIDC
import OIDCTesting
import Testing

/// A signing key, its JWKS in a temporary file, and tokens signed with it.
struct SignedFixture {
    let key: TestSigningKey
    let jwksPath: String
    static let now = 1_800_000_000

    init(_ algorithm: JWSAlgorithm = .rs256) throws {
        key = try TestSigningKey.generate(algorithm, keyID: "k1")
        jwksPath = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-cli-\(UUID().uuidString).jwks.json").path
        try key.jwksJSON.write(toFile: jwksPath, atomically: true, encoding: .utf8)
    }

    func token(_ overrides: [String: Any] = [:]) throws -> String {
        var claims: [String: Any] = [
            "iss": "https://idp.example", "sub": "user-1", "aud": "cli", "exp": Self.now + 600, "iat": Self.now - 10,
            "nonce": "n-1", "auth_time": Self.now - 100, "name": "Jane",
        ]
        claims.merge(overrides) { _, new in new }
        return try key.sign(claims: claims)
    }

    func verify(_ token: String, _ extra: [String] = [], stdin: String? = nil) async throws -> CommandResult {
        try await OIDCBinary.run(
            ["verify", token, "--issuer", "https://idp.example", "--audience", "cli", "--jwks", jwksPath, "--now", "\(Self.now)"] + extra,
            stdin: stdin
        )
    }
}

@Suite("oidc verify and oidc decode")
struct VerifyCommandTests {
    @Test("a valid token prints its claims as JSON and exits 0", arguments: [JWSAlgorithm.rs256, .es256, .ps256, .edDSA])
    func valid(algorithm: JWSAlgorithm) async throws {
        let fixture = try SignedFixture(algorithm)
        let result = try await fixture.verify(try fixture.token(), ["--nonce", "n-1"])
        #expect(result.status == 0, "\(result.stderr)")
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(claims["sub"] as? String == "user-1")
        #expect(claims["name"] as? String == "Jane")
    }

    @Test("- reads the token from standard input")
    func standardInput() async throws {
        let fixture = try SignedFixture()
        let result = try await fixture.verify("-", ["--nonce", "n-1"], stdin: try fixture.token() + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"sub\":\"user-1\""))
    }

    @Test("a rejected token exits 4 with the reason on stderr and nothing on stdout", arguments: [
        (["exp": SignedFixture.now - 61], [:], [] as [String], "expired"),
        ([:], ["iss": "https://evil.example"], [], "issuer"),
        ([:], ["aud": "someone-else"], [], "aud"),
        ([:], ["nonce": "other"], ["--nonce", "n-1"], "nonce"),
        (["iat": SignedFixture.now + 3600], [:], [], "future"),
        (["auth_time": SignedFixture.now - 4000], [:], ["--max-age", "3600"], "max_age"),
    ] as [([String: Int], [String: String], [String], String)])
    func rejected(numbers: [String: Int], strings: [String: String], flags: [String], reason: String) async throws {
        let fixture = try SignedFixture()
        var claims: [String: Any] = numbers
        claims.merge(strings) { _, new in new }
        let result = try await fixture.verify(try fixture.token(claims), flags)
        #expect(result.status == 4)
        #expect(result.stderr.contains(reason), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("--now and --leeway move the expiry boundary")
    func leeway() async throws {
        let fixture = try SignedFixture()
        let token = try fixture.token(["exp": SignedFixture.now - 30])
        #expect(try await fixture.verify(token).status == 0)
        #expect(try await fixture.verify(token, ["--leeway", "10"]).status == 4)
    }

    @Test("a token signed by another key, a tampered one and alg none exit 4")
    func forged() async throws {
        let fixture = try SignedFixture()
        let other = try TestSigningKey.generate(.rs256, keyID: "k1")
        let forged = try other.sign(claims: ["iss": "https://idp.example", "sub": "x", "aud": "cli", "exp": SignedFixture.now + 60, "iat": SignedFixture.now])
        #expect(try await fixture.verify(forged).status == 4)
        var parts = try fixture.token().split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"iss":"https://idp.example","sub":"admin","aud":"cli","exp":1900000000,"iat":1800000000}"#.utf8))
        #expect(try await fixture.verify(parts.joined(separator: ".")).status == 4)
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        let result = try await fixture.verify(none)
        #expect(result.status == 4)
        #expect(result.stderr.contains("none"))
    }

    @Test("the access token is checked against at_hash")
    func atHash() async throws {
        let fixture = try SignedFixture()
        // at_hash of "access-1" for RS256: base64url of the left half of SHA-256, computed with Python's hashlib.
        let token = try fixture.token(["at_hash": "9MKET0Y7WpOlF96BtnoJyA"])
        #expect(try await fixture.verify(token, ["--access-token", "access-1"]).status == 0)
        let wrong = try await fixture.verify(token, ["--access-token", "access-2"])
        #expect(wrong.status == 4)
        #expect(!wrong.stderr.contains("access-2"))
        // Kept out of ps: from a file, or from standard input.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("access-1\n".utf8)))
        #expect(try await fixture.verify(token, ["--access-token", "@" + file]).status == 0)
        let fromInput = try await fixture.verify(token, ["--access-token", "-"], stdin: "access-1\n")
        #expect(fromInput.status == 0, "\(fromInput.stderr)")
        let both = try await fixture.verify("-", ["--access-token", "-"], stdin: token)
        #expect(both.status == 2)
    }

    @Test("usage mistakes exit 2 and name the flag", arguments: [
        (["--leeway", "-1"], "--leeway"),
        (["--now", "yesterday"], "--now"),
        (["--max-age", "-3"], "--max-age"),
        (["--issuer-match", "fuzzy"], "--issuer-match"),
    ])
    func usage(flags: [String], flag: String) async throws {
        let fixture = try SignedFixture()
        let result = try await fixture.verify(try fixture.token(), flags)
        #expect(result.status == 2)
        #expect(result.stderr.contains(flag), "\(result.stderr)")
    }

    @Test("a missing required option or JWKS file is a usage error")
    func missing() async throws {
        let fixture = try SignedFixture()
        let token = try fixture.token()
        let noIssuer = try await OIDCBinary.run(["verify", token, "--audience", "cli", "--jwks", fixture.jwksPath])
        #expect(noIssuer.status == 2)
        #expect(noIssuer.stderr.contains("--issuer"))
        let noFile = try await OIDCBinary.run(["verify", token, "--issuer", "https://idp.example", "--audience", "cli", "--jwks", "/nonexistent/jwks.json"])
        #expect(noFile.status == 2)
        #expect(noFile.stderr.contains("--jwks"))
    }

    @Test("an unreachable JWKS URL exits 5; a plain http one off loopback is refused")
    func unreachable() async throws {
        let fixture = try SignedFixture()
        let token = try fixture.token()
        let refused = try await OIDCBinary.run(["verify", token, "--issuer", "https://idp.example", "--audience", "cli", "--jwks", "http://127.0.0.1:1/jwks"])
        #expect(refused.status == 5, "\(refused.stderr)")
        let insecure = try await OIDCBinary.run(["verify", token, "--issuer", "https://idp.example", "--audience", "cli", "--jwks", "http://idp.example/jwks"])
        #expect(insecure.status == 2)
        #expect(insecure.stderr.contains("--jwks"))
        let brokenPath = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-broken-\(UUID().uuidString).json").path
        try #"{"keys":"nope"}"#.write(toFile: brokenPath, atomically: true, encoding: .utf8)
        let broken = try await OIDCBinary.run(["verify", token, "--issuer", "https://idp.example", "--audience", "cli", "--jwks", brokenPath])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("--jwks"))
    }

    @Test("decode prints header and claims labelled unverified, and never checks anything")
    func decode() async throws {
        let fixture = try SignedFixture()
        let expired = try fixture.token(["exp": 1])
        let result = try await OIDCBinary.run(["decode", expired])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["unverified"] as? Bool == true)
        #expect((object["header"] as? [String: Any])?["kid"] as? String == "k1")
        #expect((object["claims"] as? [String: Any])?["exp"] as? Int == 1)
        #expect(result.stderr.contains("UNVERIFIED"))
        let garbage = try await OIDCBinary.run(["decode", "not-a-token"])
        #expect(garbage.status == 2)
        #expect(garbage.stdout.isEmpty)
    }
}
