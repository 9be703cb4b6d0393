import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// The built `oidc` against django-oauth-toolkit 3.4.1 (PyPI), started by
/// `scripts/dot-provider.sh start` and named by the `OIDC_DOT_*` variables it prints: a device login
/// (approved by `scripts/dot-agent.py`, run as the browser) whose token response has no ID token,
/// then `status`, `token` and a refresh.
@Suite(
    "oidc against django-oauth-toolkit", .timeLimit(.scaledMinutes(3)),
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_DOT_ISSUER"] != nil, "set OIDC_DOT_ISSUER (scripts/dot-provider.sh start prints it)")
)
struct DjangoOAuthToolkitCLIInteropTests {
    static let environment = ProcessInfo.processInfo.environment
    static let issuer = environment["OIDC_DOT_ISSUER"] ?? ""
    /// The test user agent as a browser command: it opens the link `oidc` hands it and approves.
    static let agent =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/dot-agent.py").path

    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_DOT_" + name], "OIDC_DOT_\(name) is not set: export what scripts/dot-provider.sh start prints")
    }

    @Test("login --flow device --scope openid: no ID token comes, the login is kept and status says why; token prints the access token; refresh renews it")
    func deviceLoginWithoutIDToken() async throws {
        let sandbox = LoginSandbox()
        let login = try await sandbox.run([
            "login", "--flow", "device", "--issuer", Self.issuer, "--device-authorization-endpoint", try Self.variable("DEVICE_AUTHORIZATION_ENDPOINT"),
            "--client-id", try Self.variable("CLIENT_ID"), "--scope", "openid", "--browser", Self.agent, "--timeout", "60", "--profile", "dot",
        ])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.isEmpty)
        #expect(!login.stderr.contains("'openid' scope"), "\(login.stderr)")
        #expect(login.stderr.contains("no ID token (the provider's device grant sent none)"), "\(login.stderr)")
        let stored = try #require(try sandbox.storedLogin("dot"))
        #expect(stored.subject == nil && stored.tokens.idToken == nil && stored.tokens.refreshToken != nil)

        let status = try await sandbox.run(["status", "--profile", "dot"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("no ID token (the provider's device grant sent none)"), "\(status.stdout)")
        #expect(status.stdout.contains(Self.issuer) && status.stdout.contains("refreshable: yes"), "\(status.stdout)")

        let token = try await sandbox.run(["token", "--profile", "dot"])
        #expect(token.status == 0, "\(token.stderr)")
        #expect(token.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == stored.tokens.accessToken.revealedValue)

        let refresh = try await sandbox.run(["refresh", "--profile", "dot"])
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let refreshed = try #require(try sandbox.storedLogin("dot"))
        #expect(refreshed.tokens.accessToken != stored.tokens.accessToken && refreshed.tokens.refreshToken != stored.tokens.refreshToken)

        let userinfo = issuerURL.appendingPathComponent("userinfo/").absoluteString
        let request = try await sandbox.run(["request", userinfo, "--profile", "dot"])
        #expect(request.status == 0, "\(request.stderr)")
    }

    var issuerURL: URL { URL(string: Self.issuer)! }
}
