import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

@Suite("oidc provider and oidc mint", .timeLimit(.scaledMinutes(1)))
struct ProviderAndMintCommandTests {
    /// Starts `oidc provider`, waits (bounded) for the issuer line on stdout.
    static func startProvider(_ arguments: [String] = []) async throws -> (process: ChildProcess, issuer: String) {
        let process = try ChildProcess(OIDCBinary.url.path, ["provider"] + arguments)
        var line = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !line.contains("\n") {
            let chunk = await process.output()
            if chunk.isEmpty { break }
            line += chunk
        }
        return (process, line.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func get(_ url: String) async throws -> (Int, Data) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test("oidc provider prints its issuer, serves discovery and JWKS, and stops on SIGINT with 130")
    func provider() async throws {
        let secretFile = try Self.temporaryFile("s3cret\n")
        let (process, issuer) = try await Self.startProvider(["--access-token-lifetime", "120", "--id-token-alg", "ES256", "--client-id", "cli", "--client-secret-file", secretFile, "--par", "required"])
        defer { process.signal(SIGKILL); _ = process.waitForExit() }
        #expect(issuer.hasPrefix("http://127.0.0.1:"))
        let (status, body) = try await Self.get(issuer + "/.well-known/openid-configuration")
        #expect(status == 200)
        let metadata = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(metadata["issuer"] as? String == issuer)
        #expect(metadata["pushed_authorization_request_endpoint"] as? String == issuer + "/par")
        #expect(metadata["require_pushed_authorization_requests"] as? Bool == true)
        let (_, jwks) = try await Self.get(try #require(metadata["jwks_uri"] as? String))
        #expect(try JWKSet(json: Array(jwks)).keys.count >= 2)
        process.signal(SIGINT)
        #expect(await process.exitStatus() == 130)
        let messages = await process.errors()
        #expect(messages.contains("test-client, cli"))
        #expect(!messages.contains("s3cret"))
        #expect(messages.contains("stopped"))
    }

    @Test("SIGTERM stops the provider cleanly with 0; a port in use is a clear error")
    func terminate() async throws {
        let (process, issuer) = try await Self.startProvider()
        defer { process.signal(SIGKILL); _ = process.waitForExit() }
        let port = try #require(URL(string: issuer)?.port)
        let busy = try await OIDCBinary.run(["provider", "--port", "\(port)"])
        #expect(busy.status == 2)
        #expect(busy.stderr.contains("127.0.0.1:\(port) is in use by another program"), "\(busy.stderr)")
        process.signal(SIGTERM)
        #expect(await process.exitStatus() == 0)
    }

    /// The first port an ordinary user may bind here (`net.ipv4.ip_unprivileged_port_start`; Docker sets 0).
    static var firstUnprivilegedPort: Int { BindFailure.firstUnprivilegedPort }

    /// As an ordinary user (the suite's user), a port below 1024 was "Permission denied (errno: 13); is
    /// the port in use?". Root may bind it, and so may anyone where every port is unprivileged.
    @Test(
        "a privileged port is said to be one, with what to do",
        .enabled(if: getuid() != 0 && firstUnprivilegedPort > 1, "this user may bind port 1 (root, or ip_unprivileged_port_start is 0 or 1)"))
    func privilegedPort() async throws {
        let refused = try await OIDCBinary.run(["provider", "--port", "1"], timeout: .scaled(.seconds(20)))
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains("127.0.0.1:1 may not be bound by this user")
                && refused.stderr.contains("ports below \(Self.firstUnprivilegedPort) are privileged"), "\(refused.stderr)")
    }

    @Test("provider usage errors name the flag", arguments: [
        (["--host", "0.0.0.0"], "--host"), (["--port", "70000"], "--port"), (["--client-secret", "x"], "--client-id"),
        (["--id-token-alg", "HS256"], "--id-token-alg"), (["--access-token-lifetime", "0"], "--access-token-lifetime"),
        (["--par", "sometimes"], "--par"),
    ])
    func providerUsage(arguments: [String], flag: String) async throws {
        let result = try await OIDCBinary.run(["provider"] + arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(flag), "\(result.stderr)")
    }

    static func temporaryFile(_ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-mint-\(UUID().uuidString)").path
        // 0600: a client secret file others can read is refused (review 3, L4).
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    @Test("oidc mint signs with each algorithm family; the tokens verify with the library", arguments: [JWSAlgorithm.rs256, .es384, .ps256, .edDSA])
    func mint(algorithm: JWSAlgorithm) async throws {
        let key = try TestSigningKey.generate(algorithm, keyID: "m1")
        let keyPath = try Self.temporaryFile(try key.pem())
        let claims = #"{"iss":"https://idp.example","sub":"u","aud":"app","exp":2000000000,"iat":1700000000}"#
        let result = try await OIDCBinary.run(["mint", "--key", keyPath, "--alg", algorithm.rawValue, "--claims", claims, "--kid", "m1"])
        #expect(result.status == 0, "\(result.stderr)")
        let token = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verified = try IDTokenVerifier(issuer: "https://idp.example", clientID: "app", nonce: .absent)
            .verify(token, keys: JWKSet(json: key.jwksJSON), now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(verified.keyID == "m1")
        #expect(verified.algorithm == algorithm)
    }

    @Test("HS256 minting takes the key file's bytes as the secret; claims come from a file or stdin")
    func hmac() async throws {
        let secret = String(repeating: "k", count: 32)
        let keyPath = try Self.temporaryFile(secret)
        let claimsPath = try Self.temporaryFile(#"{"iss":"i","sub":"u","aud":"app","exp":2000000000,"iat":1700000000}"#)
        let fromFile = try await OIDCBinary.run(["mint", "--key", keyPath, "--alg", "HS256", "--claims", "@" + claimsPath])
        let fromStdin = try await OIDCBinary.run(["mint", "--key", keyPath, "--alg", "HS256", "--claims", "-"], stdin: #"{"iss":"i","sub":"u","aud":"app","exp":2000000000,"iat":1700000000}"#)
        #expect(fromFile.status == 0 && fromStdin.status == 0)
        var verifier = IDTokenVerifier(issuer: "i", clientID: "app", nonce: .absent)
        verifier.allowedAlgorithms.insert(.hs256)
        verifier.hmacSecret = Secret(secret)
        for token in [fromFile.stdout, fromStdin.stdout] {
            _ = try verifier.verify(token.trimmingCharacters(in: .whitespacesAndNewlines), keys: JWKSet(keys: []), now: Date(timeIntervalSince1970: 1_800_000_000))
        }
    }

    @Test("mint usage errors: unreadable key, wrong key type, claims that are not an object", arguments: [
        (["--key", "/nonexistent.pem", "--alg", "RS256", "--claims", "{}"], "--key"),
        (["--alg", "RS256", "--claims", "[1]"], "--claims"),
        (["--alg", "RS256", "--claims", #"{"a":1,"a":2}"#], "--claims"),
        (["--alg", "ES256", "--claims", "{}"], "--key"),
        (["--alg", "nope", "--claims", "{}"], "--alg"),
    ])
    func mintUsage(arguments: [String], flag: String) async throws {
        var arguments = arguments
        if !arguments.contains("--key") {
            arguments += ["--key", try Self.temporaryFile(try TestSigningKey.generate(.rs256).pem())]
        }
        let result = try await OIDCBinary.run(["mint"] + arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(flag), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
