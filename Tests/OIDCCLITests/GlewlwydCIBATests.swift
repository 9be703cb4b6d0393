import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// `oidc login --flow ciba` against glewlwyd 2.7.5's CIBA (its `oidc-ciba` issuer, provisioned by
/// `scripts/glewlwyd.sh start`): poll and ping, the user approving or refusing on "their device"
/// through glewlwyd's own user API (`scripts/glewlwyd-agent.py ciba`, which logs the user in, lists
/// their pending requests and follows the approval link, as glewlwyd's login page does). glewlwyd
/// takes a `login_hint` of the JSON form `{"username": …}`.
@Suite(
    "oidc login --flow ciba against glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_CIBA_ISSUER"] != nil, "set OIDC_GLEWLWYD_CIBA_ISSUER (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydCIBATests {
    static let environment = ProcessInfo.processInfo.environment
    static let issuer = environment["OIDC_GLEWLWYD_CIBA_ISSUER"] ?? ""
    static let grant = "urn:openid:params:grant-type:ciba"

    static func variable(_ name: String) throws -> String { try GlewlwydCLIInteropTests.variable(name) }

    static var hint: String { #"{"username":"\#(environment["OIDC_GLEWLWYD_USERNAME"] ?? "alice")"}"# }

    static func login(_ mode: String, message: String, _ more: [String] = []) throws -> [String] {
        [
            "login", "--flow", "ciba", "--issuer", issuer, "--client-id", try variable("CIBA_\(mode)_CLIENT_ID"),
            "--client-secret-file", try variable("CIBA_\(mode)_CLIENT_SECRET_FILE"), "--login-hint", hint, "--binding-message", message,
            "--scope", "openid", "--scope", GlewlwydCLIInteropTests.scope, "--timeout", "90",
        ] + more
    }

    /// The user decides on their device: the agent approves (or cancels) the pending request of
    /// `client` with `message`, once the command has sent it (tried for 30 s at most).
    static func decide(client: String, message: String, deny: Bool = false) async throws -> TestAgent.Result {
        var last: TestAgent.Result?
        for _ in 0..<60 {
            let result = try await TestAgent.run("glewlwyd-agent.py", ["ciba", "--client-id", client, "--binding-message", message] + (deny ? ["--deny"] : []))
            if result.status == 0 || !result.errors.contains("no pending CIBA request") { return result }
            last = result
            try await Task.sleep(for: .milliseconds(500))
        }
        return try #require(last)
    }

    static func unique(_ prefix: String) -> String { "\(prefix)-\(UInt32.random(in: 0...UInt32.max))" }

    @Test("poll: approved on the device, the ID token verified, stored; oidc token refreshes it; denied: exit 4 access_denied, nothing stored")
    func poll() async throws {
        let sandbox = LoginSandbox()
        let client = try Self.variable("CIBA_POLL_CLIENT_ID")
        let message = Self.unique("poll")
        async let approval = Self.decide(client: client, message: message)
        let login = try await sandbox.run(try Self.login("POLL", message: message, ["--profile", "bank"]))
        let approved = try await approval
        #expect(approved.status == 0, "\(approved.output)")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("it shows \"\(message)\""), "\(login.stderr)")
        #expect(login.stderr.contains("logged in as "), "\(login.stderr)")
        let stored = try #require(try sandbox.storedLogin("bank"))
        #expect(stored.grant?.type.rawValue == Self.grant && stored.tokens.refreshToken != nil && stored.subject != nil)
        LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")

        try ClientCredentialsCommandTests.expire(sandbox, profile: "bank")
        let token = try await sandbox.run(["token", "--profile", "bank"])
        #expect(token.status == 0, "\(token.stderr)")
        let refreshed = try #require(try sandbox.storedLogin("bank"))
        #expect(token.stdout == refreshed.tokens.accessToken.revealedValue + "\n" && refreshed.tokens.accessToken != stored.tokens.accessToken)

        let refusedMessage = Self.unique("deny")
        async let denial = Self.decide(client: client, message: refusedMessage, deny: true)
        let denied = try await sandbox.run(try Self.login("POLL", message: refusedMessage, ["--profile", "denied"]))
        #expect(try await denial.status == 0)
        #expect(denied.status == 4 && denied.stderr.contains("access_denied"), "\(denied.stderr)")
        #expect(try sandbox.storedLogin("denied") == nil)
    }

    @Test("ping: glewlwyd notifies the command's listener with the bearer token and auth_req_id; one token request follows")
    func ping() async throws {
        let sandbox = LoginSandbox()
        let client = try Self.variable("CIBA_PING_CLIENT_ID")
        let port = try freePort()
        let registered = try await TestAgent.run("glewlwyd-agent.py", ["ciba-notification-uri", client, "http://127.0.0.1:\(port)/ciba-notification"])
        try #require(registered.status == 0, "\(registered.output)")
        let message = Self.unique("ping")
        async let approval = Self.decide(client: client, message: message)
        let login = try await sandbox.run(
            try Self.login("PING", message: message, ["--ciba-mode", "ping", "--notification-listen", "127.0.0.1:\(port)", "--profile", "ping", "-vv"]))
        #expect(try await approval.status == 0)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("listening for the provider's notification at http://127.0.0.1:\(port)/"), "\(login.stderr)")
        let stored = try #require(try sandbox.storedLogin("ping"))
        #expect(stored.grant?.type.rawValue == Self.grant && stored.subject != nil)
        LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
    }
}
