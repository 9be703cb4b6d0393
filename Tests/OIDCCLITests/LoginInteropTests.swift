import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// `oidc login` and the commands after it against oidc-provider-mock (PyPI, Flask + Authlib), the
/// independent provider `make test` starts with `--require-registration` (docs/interop.md): a
/// confidential client whose redirect URI is registered with its exact port, a sign-in form the test
/// browser fills in, refresh with client_secret_basic, and no revocation endpoint.
@Suite(
    "oidc login against oidc-provider-mock", .timeLimit(.scaledMinutes(2)),
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_INTEROP_ISSUER"] != nil, "set OIDC_INTEROP_ISSUER (make test does)")
)
struct LoginInteropTests {
    static let issuer = ProcessInfo.processInfo.environment["OIDC_INTEROP_ISSUER"] ?? ""

    @Test("login with a registered confidential client, then token, request to userinfo, refresh, status and logout")
    func loginAgainstMock() async throws {
        let sandbox = LoginSandbox()
        let port = try freePort()
        let redirect = "http://127.0.0.1:\(port)/callback"
        let client = try await withNIOHTTPTransport { transport in
            let metadata = try await ProviderDiscovery(transport: transport).metadata(for: Self.issuer)
            let body = #"{"redirect_uris":["\#(redirect)"],"token_endpoint_auth_method":"client_secret_basic"}"#
            let response = try await transport.send(
                HTTPRequest(method: "POST", url: try #require(metadata.registrationEndpoint), headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            )
            let object = try StrictJSON.parseObject(response.body)
            return (id: try #require(object["client_id"]?.stringValue), secret: try #require(object["client_secret"]?.stringValue))
        }
        let secretFile = sandbox.root.appendingPathComponent("client-secret").path
        #expect(FileManager.default.createFile(atPath: secretFile, contents: Data(client.secret.utf8), attributes: [.posixPermissions: 0o600]))

        let login = try await sandbox.run(
            ["login", "--issuer", Self.issuer, "--client-id", client.id, "--client-secret-file", secretFile, "--listen", "127.0.0.1:\(port)",
             "--scope", "openid", "--scope", "email", "--profile", "mock"],
            browser: ["--value", "sub=alice@example.com"]
        )
        #expect(login.status == 0, "\(login.stderr)\n\(sandbox.log)")
        #expect(login.stderr.contains("logged in as alice@example.com at \(Self.issuer)"))
        #expect(!login.stderr.contains(client.secret))
        let stored = try #require(try sandbox.storedLogin("mock"))
        #expect(stored.provider?.clientAuthentication == .clientSecretBasic)
        let profile = try String(contentsOfFile: sandbox.profileDirectory + "/mock.json", encoding: .utf8)
        #expect(!profile.contains(client.secret))
        #expect(profile.contains(secretFile))

        let token = try await sandbox.run(["token", "--profile", "mock"])
        #expect(token.stdout == stored.tokens.accessToken.revealedValue + "\n")
        let idToken = try await sandbox.run(["token", "--profile", "mock", "--output", "id-token"])
        #expect(idToken.stdout == (stored.tokens.idToken?.revealedValue ?? "-") + "\n")
        let json = try await sandbox.run(["token", "--profile", "mock", "--output", "json"])
        let jsonObject = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(jsonObject["subject"] as? String == "alice@example.com")
        let credential = try await sandbox.run(["token", "--profile", "mock", "--output", "exec-credential"])
        let credentialObject = try #require(try JSONSerialization.jsonObject(with: Data(credential.stdout.utf8)) as? [String: Any])
        #expect((credentialObject["status"] as? [String: Any])?["token"] as? String == stored.tokens.idToken?.revealedValue)

        let userinfo = try await sandbox.run(["request", Self.issuer + "/userinfo", "--profile", "mock"])
        #expect(userinfo.status == 0, "\(userinfo.stderr)")
        #expect(userinfo.stdout.contains("alice@example.com"))

        let refresh = try await sandbox.run(["refresh", "--profile", "mock"])
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let refreshed = try #require(try sandbox.storedLogin("mock"))
        #expect(refreshed.tokens.accessToken != stored.tokens.accessToken)
        #expect(refreshed.tokens.refreshToken == stored.tokens.refreshToken)  // no rotation at this provider

        let status = try await sandbox.run(["status", "--profile", "mock", "--output", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(object["subject"] as? String == "alice@example.com")
        #expect(object["refreshable"] as? Bool == true)

        let logout = try await sandbox.run(["logout", "--profile", "mock"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stderr.contains("offers no revocation"))
        #expect(try sandbox.storedLogin("mock") == nil)
    }
}
