import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A client-credentials login keeps its grant as a typed field of the stored login
/// (``StoredLogin/grant``); logins an earlier version stored with the grant in attributes still load
/// as such, and still renew.
@Suite("The grant of a stored login", .timeLimit(.scaledMinutes(2)))
struct StoredGrantTests {
    static func login(grant: StoredLogin.Grant?, attributes: [String: String] = ["profile": "ci"]) -> StoredLogin {
        var login = StoredLogin(
            tokens: TokenSet(accessToken: Secret("at"), tokenType: "Bearer", scopes: ["reports"], receivedAt: Date(timeIntervalSince1970: 1_700_000_000)),
            issuer: "https://id.example", clientID: "daemon", attributes: attributes
        )
        login.grant = grant
        return login
    }

    @Test("the grant is written as its own member and read back; a login without one has none")
    func roundTrip() throws {
        let grant = StoredLogin.Grant.clientCredentials(scopes: ["reports", "audit"], parameters: [OAuthParameter("resource", "https://api.example.com")])
        let bytes = try Self.login(grant: grant).serialized()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let member = try #require(object["grant"] as? [String: Any])
        #expect(member["type"] as? String == "client_credentials")
        #expect(member["scopes"] as? [String] == ["reports", "audit"])
        #expect(member["parameters"] as? [[String]] == [["resource", "https://api.example.com"]])
        #expect(try StoredLogin(serialized: bytes) == Self.login(grant: grant))
        #expect(try StoredLogin(serialized: try Self.login(grant: .deviceCode).serialized()).grant == .deviceCode)
        let none = try Self.login(grant: nil).serialized()
        #expect(try StoredLogin(serialized: none).grant == nil)
        #expect(!String(decoding: none, as: UTF8.self).contains("grant"))
    }

    @Test("an earlier version's login, its grant in attributes, reads with that grant, the attributes kept")
    func legacyAttributes() throws {
        let file = #"""
            {"version":1,"issuer":"https://id.example","client_id":"daemon","tokens":{"access_token":"at","token_type":"Bearer","scope":"reports","received_at":1700000000},
             "attributes":{"profile":"ci","grant_type":"client_credentials","scope":"reports audit","parameters":"resource=https%3A%2F%2Fapi.example.com"}}
            """#
        let login = try StoredLogin(serialized: Array(file.utf8))
        #expect(login.grant == .clientCredentials(scopes: ["reports", "audit"], parameters: [OAuthParameter("resource", "https://api.example.com")]))
        #expect(login.attributes["scope"] == "reports audit" && login.attributes["grant_type"] == "client_credentials")
        let device = file.replacingOccurrences(of: #""grant_type":"client_credentials","scope":"reports audit","parameters":"resource=https%3A%2F%2Fapi.example.com""#,
            with: #""grant_type":"urn:ietf:params:oauth:grant-type:device_code""#)
        #expect(try StoredLogin(serialized: Array(device.utf8)).grant == .deviceCode)
    }

    @Test("a grant member of the wrong shape makes the login unreadable (corrupt store)", arguments: [
        #""grant":"client_credentials""#, #""grant":{"scopes":[]}"#, #""grant":{"type":"client_credentials","scopes":[1]}"#,
        #""grant":{"type":"client_credentials","parameters":[["resource"]]}"#,
    ])
    func corrupt(member: String) {
        let file = #"{"version":1,"issuer":"i","client_id":"c","tokens":{"access_token":"a","token_type":"Bearer","received_at":1},"# + member + "}"
        #expect { try StoredLogin(serialized: Array(file.utf8)) } throws: { ($0 as? OIDCError)?.code == .corruptStore }
    }

    @Test("a client-credentials login stored by an earlier version (grant in attributes only) is renewed with its scope and resource, and renewed with the typed grant")
    func earlierLoginRenews() async throws {
        let secret = ClientCredentialsCommandTests.secret
        let configuration = TestProvider.Configuration(clients: [.confidential(id: "daemon", secret: secret)])
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "secret", secret + "\n")
            let login = try await sandbox.run([
                "login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon",
                "--client-secret-file", secretFile, "--scope", "reports", "--param", "resource=https://api.example.com", "--profile", "ci",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: sandbox.store))
            let key = TokenStoreKey(service: "oidc", account: "ci")
            var stored = try #require(try keychain.load(key))
            #expect(stored.grant == .clientCredentials(scopes: ["reports"], parameters: [OAuthParameter("resource", "https://api.example.com")]))
            // As an earlier version kept it: no grant member, the grant in attributes; and expired.
            stored.grant = nil
            stored.tokens.expiresAt = Date().addingTimeInterval(-10)
            try keychain.save(stored, for: key)
            let file = try #require(try FileManager.default.contentsOfDirectory(atPath: sandbox.store).first { $0.hasSuffix("ci.json") })
            #expect(!(try String(contentsOfFile: sandbox.store + "/" + file, encoding: .utf8)).contains(#""grant":"#))

            let token = try await sandbox.run(["token", "--profile", "ci"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(await provider.grantCount("client_credentials") == 2)
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == "client_credentials" && sent["scope"] == "reports" && sent["resource"] == "https://api.example.com")
            let renewed = try #require(try keychain.load(key))
            #expect(token.stdout == renewed.tokens.accessToken.revealedValue + "\n")
            #expect(renewed.grant == .clientCredentials(scopes: ["reports"], parameters: [OAuthParameter("resource", "https://api.example.com")]))
            let status = try await sandbox.run(["status", "--profile", "ci"])
            #expect(status.stdout.contains("profile ci: client daemon has its own tokens (client credentials)"), "\(status.stdout)")
        }
    }
}
