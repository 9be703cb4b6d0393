import Foundation
import OIDCTestSupport
import Testing

/// The built `oidc` against glewlwyd 2.7.5 (Debian's package), started by `make test-package`
/// (`scripts/glewlwyd.sh start`, docs/glewlwyd.md) and named by the `OIDC_GLEWLWYD_*` variables it
/// prints: a device login approved by the test user agent (`scripts/glewlwyd-agent.py`, run as the
/// browser), and client-credentials logins with `client_secret_basic` and `private_key_jwt` whose
/// tokens `oidc introspect` finds active.
@Suite(
    "oidc against glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_ISSUER"] != nil, "set OIDC_GLEWLWYD_ISSUER (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydCLIInteropTests {
    /// This process's environment, where `make test-package` put the `OIDC_GLEWLWYD_*` variables.
    static let environment = ProcessInfo.processInfo.environment
    /// glewlwyd's `oidc` plugin: `http://127.0.0.1:PORT/api/oidc`.
    static let issuer = environment["OIDC_GLEWLWYD_ISSUER"] ?? ""
    /// The custom scope every client and the user have (`api.read`).
    static let scope = environment["OIDC_GLEWLWYD_SCOPE"] ?? "api.read"
    /// The test user agent, as a browser command: `device` and the URL `oidc` opens.
    static let agent =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/glewlwyd-agent.py").path + " device"

    /// An `OIDC_GLEWLWYD_*` variable that `scripts/glewlwyd.sh start` exports.
    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_GLEWLWYD_" + name], "OIDC_GLEWLWYD_\(name) is not set: export what scripts/glewlwyd.sh start prints")
    }

    /// stdout of `oidc introspect`, one JSON object.
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test("login --flow device: the agent, as the browser, approves verification_uri_complete; the login is stored and status shows it")
    func deviceLogin() async throws {
        let sandbox = LoginSandbox()
        let login = try await sandbox.run([
            "login", "--flow", "device", "--issuer", Self.issuer, "--client-id", try Self.variable("PUBLIC_CLIENT_ID"), "--scope", "openid",
            "--scope", Self.scope, "--browser", Self.agent, "--timeout", "60", "--profile", "gw",
        ])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.isEmpty)
        #expect(login.stderr.contains("logged in as "), "\(login.stderr)")
        #expect(login.stderr.contains("(profile 'gw')"), "\(login.stderr)")

        let status = try await sandbox.run(["status", "--profile", "gw"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains(Self.issuer), "\(status.stdout)")
    }

    @Test("login --flow client-credentials with private_key_jwt addressed to the endpoint, then introspect: exit 0, active")
    func privateKeyJWT() async throws {
        let sandbox = LoginSandbox()
        let login = try await sandbox.run([
            "login", "--flow", "client-credentials", "--issuer", Self.issuer, "--client-id", try Self.variable("PRIVATE_KEY_JWT_CLIENT_ID"),
            "--private-key-file", try Self.variable("PRIVATE_KEY_JWT_CLIENT_KEY_FILE"), "--key-id", try Self.variable("PRIVATE_KEY_JWT_CLIENT_KID"),
            "--assertion-audience", "endpoint", "--scope", Self.scope, "--profile", "daemon",
        ])
        #expect(login.status == 0, "\(login.stderr)")

        let introspect = try await sandbox.run(["introspect", "--profile", "daemon"])
        #expect(introspect.status == 0, "\(introspect.stderr)")
        let answer = try Self.json(introspect.stdout)
        #expect(answer["active"] as? Bool == true)
        #expect(answer["scope"] as? String == Self.scope)

        // The default audience, the issuer, is refused by glewlwyd: a failed login, no token.
        let refused = try await sandbox.run([
            "login", "--flow", "client-credentials", "--issuer", Self.issuer, "--client-id", try Self.variable("PRIVATE_KEY_JWT_CLIENT_ID"),
            "--private-key-file", try Self.variable("PRIVATE_KEY_JWT_CLIENT_KEY_FILE"), "--key-id", try Self.variable("PRIVATE_KEY_JWT_CLIENT_KID"),
            "--scope", Self.scope, "--profile", "issuer-audience",
        ])
        #expect(refused.status != 0, "\(refused.stderr)")
        #expect(refused.status == 4 && refused.stderr.contains("403"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--assertion-audience endpoint"), "\(refused.stderr)")
    }

    @Test("login --flow client-credentials with a key file and no --key-id: the key's thumbprint is the kid glewlwyd registered; a wrong --key-id is refused in the command's words")
    func privateKeyJWTThumbprintKeyID() async throws {
        let sandbox = LoginSandbox()
        let arguments = [
            "login", "--flow", "client-credentials", "--issuer", Self.issuer, "--client-id", try Self.variable("THUMBPRINT_KID_CLIENT_ID"),
            "--private-key-file", try Self.variable("THUMBPRINT_KID_CLIENT_KEY_FILE"), "--assertion-audience", "endpoint", "--scope", Self.scope,
        ]
        let login = try await sandbox.run(arguments + ["--profile", "daemon"])
        #expect(login.status == 0, "\(login.stderr)")
        let introspect = try await sandbox.run(["introspect", "--profile", "daemon"])
        #expect(introspect.status == 0, "\(introspect.stderr)")
        #expect(try Self.json(introspect.stdout)["active"] as? Bool == true)

        let refused = try await sandbox.run(arguments + ["--key-id", "not-registered", "--profile", "wrong-kid"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("--key-id (now 'not-registered'") && refused.stderr.contains("--private-key-file"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("assertionAudience"), "\(refused.stderr)")
    }

    @Test("login --flow client-credentials with client_secret_basic, then introspect: exit 0, active, the client's own token")
    func clientSecretBasic() async throws {
        let sandbox = LoginSandbox()
        let clientID = try Self.variable("CONFIDENTIAL_CLIENT_ID")
        let login = try await sandbox.run([
            "login", "--flow", "client-credentials", "--issuer", Self.issuer, "--client-id", clientID,
            "--client-secret-file", try Self.variable("CONFIDENTIAL_CLIENT_SECRET_FILE"), "--client-auth", "client_secret_basic",
            "--scope", Self.scope, "--profile", "ci",
        ])
        #expect(login.status == 0, "\(login.stderr)")

        let introspect = try await sandbox.run(["introspect", "--profile", "ci"])
        #expect(introspect.status == 0, "\(introspect.stderr)")
        let answer = try Self.json(introspect.stdout)
        #expect(answer["active"] as? Bool == true)
        #expect(answer["client_id"] as? String == clientID)

        let unknown = try await sandbox.run(["introspect", "--profile", "ci", "-"], stdin: "not-a-token\n")
        #expect(unknown.status == 4, "\(unknown.stderr)")
        #expect(try Self.json(unknown.stdout)["active"] as? Bool == false)
    }
}
