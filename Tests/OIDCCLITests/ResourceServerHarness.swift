import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The program these tests run: `oidc resource-server`, or, with `$OIDC_RESOURCE_SERVER_COMMAND`,
/// another that takes its flags and answers as it does (the ProtectedAPI example's Hummingbird and
/// Vapor programs: scripts/examples.sh runs these suites against each).
enum ResourceServerProgram {
    static var other: String? { ProcessInfo.processInfo.environment["OIDC_RESOURCE_SERVER_COMMAND"] }

    static var executable: String { other ?? OIDCBinary.url.path }

    /// `resource-server` and `arguments` for `oidc`; `arguments` alone for another program.
    static func arguments(_ arguments: [String]) -> [String] { other == nil ? ["resource-server"] + arguments : arguments }

    /// What the program wrote on stderr, with its name at the start of a line read as `oidc`'s
    /// (`protected-api: refused GET /me: …` as `oidc: refused GET /me: …`): the rest of each line
    /// is the same.
    static func normalized(_ stderr: String) -> String {
        guard let other else { return stderr }
        let name = URL(fileURLWithPath: other).lastPathComponent + ": "
        return stderr.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(name) ? "oidc: " + $0.dropFirst(name.count) : String($0) }.joined(separator: "\n")
    }

    /// Runs the program to its end (a usage mistake, a start that fails).
    static func run(_ arguments: [String], timeout: Duration) async throws -> CommandResult {
        let result = try await OIDCBinary.run(self.arguments(arguments), timeout: timeout, executable: URL(fileURLWithPath: executable))
        return CommandResult(status: result.status, stdout: result.stdout, stderr: normalized(result.stderr))
    }

    /// Whether the server reads an absolute-form request target as received. `oidc` does, and
    /// refuses one naming another host (`malformed_request_target`). Neither framework hands its
    /// middleware such a target: Hummingbird keeps only its path, Vapor reads the whole target as a
    /// path on this host (`/http://other.example/me`). There the request is judged on that path and
    /// `Host`: never a URL on the other host.
    static var keepsAbsoluteFormTarget: Bool { other == nil }
}

/// A running `oidc resource-server` (the real binary) and the requests a test sends it.
struct ResourceServerProcess {
    let process: ChildProcess
    /// The base URL it printed on stdout, such as `http://127.0.0.1:41234`.
    let base: String

    /// Starts `oidc resource-server` with `arguments` and waits (bounded) for the base URL line.
    /// `environment` adds to this process's (such as `OIDC_TEST_CLOCK_OFFSET`, to judge tokens later).
    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> ResourceServerProcess {
        let process = try ChildProcess(
            ResourceServerProgram.executable, ResourceServerProgram.arguments(arguments),
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        var text = ""
        // The event is the line; the bound is only for a server that never prints it.
        let deadline = ContinuousClock.now + .scaled(.seconds(30))
        while ContinuousClock.now < deadline, !text.contains("\n") {
            let chunk = await process.output()
            if chunk.isEmpty { break }
            text += chunk
        }
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if !line.hasPrefix("http://") {
            process.signal(SIGKILL)
            let status = await process.exitStatus()
            Issue.record("\(ResourceServerProgram.executable) printed no URL (exit \(status)): \(await process.errors())")
        }
        return ResourceServerProcess(process: process, base: line)
    }

    func url(_ path: String) -> URL { URL(string: base + path)! }

    /// Sends one request with these header fields; the response whatever its status.
    func send(_ method: String = "GET", _ path: String = "/me", headers: [(String, String)] = []) async throws -> HTTPResponse {
        try await withNIOHTTPTransport { transport in
            try await transport.send(HTTPRequest(method: method, url: url(path), headers: HTTPHeaders(headers)))
        }
    }

    /// SIGTERM, then the exit status and everything it wrote to stderr.
    func stop(_ signal: Int32 = SIGTERM) async -> (status: Int32, stderr: String) {
        process.signal(signal)
        let status = await process.exitStatus()
        return (status, ResourceServerProgram.normalized(await process.errors()))
    }
}

/// Tokens for the resource server's tests: RFC 9068 access tokens signed by a key whose JWKS is in a
/// private file, as `--jwks FILE` reads it.
struct AccessTokenIssuer {
    static let issuer = "https://login.example.com"
    static let audience = "https://api.example.com"

    let key: TestSigningKey
    let jwksFile: String

    init(_ algorithm: JWSAlgorithm = .es256) throws {
        key = try TestSigningKey.generate(algorithm, keyID: "rs-test")
        jwksFile = try ProviderAndMintCommandTests.temporaryFile(try key.jwksJSON)
    }

    /// An `at+jwt` access token; `claims` replaces or adds members (`NSNull()` removes one).
    func token(_ claims: [String: Any] = [:], header: [String: Any] = ["typ": "at+jwt"], now: Date = Date()) throws -> String {
        var all: [String: Any] = [
            "iss": Self.issuer, "aud": Self.audience, "sub": "alice", "client_id": "my-cli", "scope": "read write",
            "iat": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970) + 600, "jti": UUID().uuidString,
        ]
        for (name, value) in claims { all[name] = value is NSNull ? nil : value }
        return try key.sign(claims: all, extraHeader: header)
    }

    /// A token bound to `key` (`cnf.jkt`).
    func token(boundTo key: DPoPKey, _ claims: [String: Any] = [:]) throws -> String {
        try token(claims.merging(["cnf": ["jkt": key.thumbprint]]) { $1 })
    }

    /// The common flags: this issuer, audience and JWKS file.
    var arguments: [String] { ["--issuer", Self.issuer, "--audience", Self.audience, "--jwks", jwksFile] }
}

extension HTTPResponse {
    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
}
