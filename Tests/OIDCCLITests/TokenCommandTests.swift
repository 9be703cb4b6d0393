import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

@Suite("oidc inject and oidc token", .timeLimit(.scaledMinutes(2)))
struct TokenCommandTests {
    static func temporaryStore() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("oidc-store-\(UUID().uuidString)").path
    }

    /// Logs the provider's user in and stores the tokens with `oidc inject`, expired when `expiresIn` < 0.
    static func inject(_ provider: TestProvider, store: String, profile: String = "work", expiresIn: Int = -10) async throws -> TokenSet {
        let tokens = try await provider.issueTokens()
        let response = #"{"access_token":"\#(tokens.accessToken.revealedValue)","token_type":"Bearer","refresh_token":"\#(tokens.refreshToken!.revealedValue)","id_token":"\#(tokens.idToken!.revealedValue)","scope":"openid offline_access"}"#
        let result = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", profile, "--issuer", provider.issuer, "--client-id", "test-client",
             "--token-endpoint", provider.tokenEndpoint, "--revocation-endpoint", provider.revocationEndpoint, "--token-response", "-", "--expires-in=\(expiresIn)"],
            stdin: response
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("test-user"))
        #expect(!result.stderr.contains(tokens.accessToken.revealedValue))
        return tokens
    }

    static func resourceStatus(_ provider: TestProvider, token: String) async throws -> Int {
        try await withNIOHTTPTransport { transport in
            try await transport.send(HTTPRequest(url: URL(string: provider.protectedResourceURL)!, headers: ["Authorization": "Bearer \(token)"])).status
        }
    }

    @Test("16 processes asking at the same moment with rotating refresh tokens: exactly one refresh, all get a valid token, nobody is logged out")
    func sixteenProcesses() async throws {
        try await withTestProvider { provider in
            let store = Self.temporaryStore()
            let old = try await Self.inject(provider, store: store)
            // A start barrier: another process holds the store's lock while the 16 start, so all of
            // them find the expired token and wait for the lock at the same moment.
            let barrier = try ChildProcess(OIDCBinary.sibling("oidc-store-writer"), [store, "oidc", "work", "block", "1500"])
            let locked = await barrier.output()
            #expect(locked.contains("locked"))
            let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
                for _ in 0..<16 { group.addTask { try await OIDCBinary.run(["token", "--store", store, "--profile", "work"], timeout: .scaled(.seconds(90))) } }
                return try await group.reduce(into: [CommandResult]()) { $0.append($1) }
            }
            _ = await barrier.exitStatus()
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
            let tokens = Set(results.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) })
            #expect(tokens.count == 1)
            #expect(!tokens.contains(old.accessToken.revealedValue))
            #expect(await provider.grantCount("refresh_token") == 1)
            for token in tokens { #expect(try await Self.resourceStatus(provider, token: token) == 200) }
            let stored = try #require(try FileKeychain(directory: URL(fileURLWithPath: store)).load(TokenStoreKey(service: "oidc", account: "work")))
            #expect(stored.tokens.accessToken.revealedValue == tokens.first)
            #expect(stored.tokens.refreshToken != old.refreshToken)
        }
    }

    @Test("a login stored by an earlier version, its endpoints in attributes, still refreshes, shows its status and is revoked at logout")
    func earlierVersionsLogin() async throws {
        try await withTestProvider { provider in
            let store = Self.temporaryStore()
            // What versions before StoredLogin.provider wrote: no provider, the endpoints as attributes.
            var tokens = try await provider.issueTokens()
            tokens.expiresAt = Date().addingTimeInterval(-10)
            let legacy = StoredLogin(
                tokens: tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user",
                attributes: [
                    "provider": "generic", "profile": "old", "token_endpoint": provider.tokenEndpoint, "jwks_uri": provider.jwksURI,
                    "revocation_endpoint": provider.revocationEndpoint, "token_endpoint_auth_method": "none",
                ]
            )
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: store))
            try keychain.save(legacy, for: TokenStoreKey(service: "oidc", account: "old"))
            let status = try await OIDCBinary.run(["status", "--store", store, "--profile", "old"])
            #expect(status.stdout.contains("refreshable: yes"), "\(status.stdout)")
            let token = try await OIDCBinary.run(["token", "--store", store, "--profile", "old"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            #expect(try await Self.resourceStatus(provider, token: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 200)
            let logout = try await OIDCBinary.run(["logout", "--store", store, "--profile", "old"])
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(await provider.requestCount(.revocation) == 1)
        }
    }

    @Test("a fresh token comes straight from the store; --force-refresh refreshes; --output json and id-token")
    func fastPathAndOutputs() async throws {
        try await withTestProvider { provider in
            let store = Self.temporaryStore()
            let tokens = try await Self.inject(provider, store: store, expiresIn: 3600)
            let plain = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"])
            #expect(plain.stdout == tokens.accessToken.revealedValue + "\n")
            #expect(plain.stderr.isEmpty)
            #expect(await provider.grantCount("refresh_token") == 0)
            let json = try await OIDCBinary.run(["token", "--store", store, "--profile", "work", "--output", "json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["subject"] as? String == "test-user")
            #expect(object["issuer"] as? String == provider.issuer)
            let id = try await OIDCBinary.run(["token", "--store", store, "--profile", "work", "--output", "id-token"])
            #expect(id.stdout == tokens.idToken!.revealedValue + "\n")
            let forced = try await OIDCBinary.run(["token", "--store", store, "--profile", "work", "--force-refresh"])
            #expect(forced.status == 0)
            #expect(forced.stdout != plain.stdout)
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }

    @Test("the fast path (before the argument parser) answers exactly as the token subcommand, for every spelling it takes")
    func fastPathMatchesTheSubcommand() async throws {
        try await withTestProvider { provider in
            let store = Self.temporaryStore()
            _ = try await Self.inject(provider, store: store, expiresIn: 3600)
            let kubectl = ["KUBERNETES_EXEC_INFO": #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}"#]
            // (arguments, environment, whether the fast path answers: else it hands over to the parser)
            let cases: [([String], [String: String], Bool)] = [
                (["token", "--store", store, "--profile", "work"], [:], true),
                (["token", "--profile=work", "--store=\(store)"], [:], true),
                (["token", "--store", store, "--profile", "work", "--output", "json"], [:], true),
                (["token", "--store", store, "--profile", "work", "--output=json"], [:], true),
                (["token", "--store", store, "--profile", "work", "--output", "id-token"], [:], true),
                (["token", "--store", store, "--profile", "work", "--output", "exec-credential"], kubectl, true),
                (["token", "--store", store, "--profile", "work", "--output", "exec-credential", "--token-type", "access"], [:], true),
                (["token", "--store", store], ["OIDC_PROFILE": "work"], true),
                (["token", "--store", store, "--profile", "nobody"], [:], true),  // not logged in: exit 4, same message
                (["--version"], [:], true),
                (["token", "--store", store, "--profile", "work", "--token-type", "access"], [:], false),  // usage error: exit 2
                (["token", "--store", store, "--profile", "work", "--profile", "work"], [:], false),
                (["token", "--store", store, "--profile="], [:], false),
                (["token", "--store", store, "--profile", "work", "-h"], [:], false),
                (["token", "--store", store, "--profile", "work", "--"], [:], false),
                (["token", "--store", store, "--profile", "work", "--output", "exec-credential"], ["KUBERNETES_EXEC_INFO": "{}"], false),
            ]
            for (arguments, environment, fastPathAnswers) in cases {
                let fast = try await OIDCBinary.run(arguments, environment: environment)
                let parsed = try await OIDCBinary.run(arguments, environment: environment.merging(["OIDC_FAST_PATH": "0"]) { $1 })
                #expect(fast.status == parsed.status, "\(arguments)")
                #expect(fast.stdout == parsed.stdout, "\(arguments)")
                #expect(fast.stderr == parsed.stderr, "\(arguments)")
                // OIDC_FAST_PATH=require exits 98 when the shortcut did not answer: it did where it should.
                let required = try await OIDCBinary.run(arguments, environment: environment.merging(["OIDC_FAST_PATH": "require"]) { $1 })
                #expect((required.status != 98) == fastPathAnswers, "\(arguments): \(required.status)")
            }
            #expect(await provider.grantCount("refresh_token") == 0)
        }
    }

    @Test("a rejected refresh logs the profile out (exit 4); an unavailable provider exits 5 and keeps it; no login exits 4")
    func failures() async throws {
        try await withTestProvider { provider in
            let store = Self.temporaryStore()
            _ = try await Self.inject(provider, store: store)
            await provider.failNextTokenRequests(1, with: .serviceUnavailable)
            let unavailable = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"])
            #expect(unavailable.status == 5, "\(unavailable.stderr)")
            #expect(unavailable.stdout.isEmpty)
            #expect(try FileKeychain(directory: URL(fileURLWithPath: store)).load(TokenStoreKey(service: "oidc", account: "work")) != nil)

            await provider.failNextTokenRequests(1, with: .invalidGrant)
            let rejected = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"])
            #expect(rejected.status == 4, "\(rejected.stderr)")
            #expect(rejected.stderr.contains("invalid_grant"))
            #expect(try FileKeychain(directory: URL(fileURLWithPath: store)).load(TokenStoreKey(service: "oidc", account: "work")) == nil)

            let none = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"])
            #expect(none.status == 4)
            #expect(none.stderr.contains("log in"))
        }
    }

    @Test("inject takes tokens from files and standard input, keeping them out of ps")
    func injectFromFiles() async throws {
        let store = Self.temporaryStore()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inject-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let refresh = directory.appendingPathComponent("refresh").path
        #expect(FileManager.default.createFile(atPath: refresh, contents: Data("refresh-from-file\n".utf8)))
        let result = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", "files", "--issuer", "https://i.example", "--client-id", "c", "--access-token", "-",
             "--refresh-token", "@" + refresh],
            stdin: "access-from-stdin\n"
        )
        #expect(result.status == 0, "\(result.stderr)")
        let login = try #require(try FileKeychain(directory: URL(fileURLWithPath: store)).load(TokenStoreKey(service: "oidc", account: "files")))
        #expect(login.tokens.accessToken == Secret("access-from-stdin"))
        #expect(login.tokens.refreshToken == Secret("refresh-from-file"))
        let twice = try await OIDCBinary.run(
            ["inject", "--store", store, "--issuer", "https://i.example", "--client-id", "c", "--access-token", "-", "--id-token", "-"]
        )
        #expect(twice.status == 2)
    }

    @Test("inject usage errors name the flag")
    func injectUsage() async throws {
        let store = Self.temporaryStore()
        let both = try await OIDCBinary.run(["inject", "--store", store, "--issuer", "https://i", "--client-id", "c", "--access-token", "a", "--token-response", "-"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("--token-response"))
        let insecure = try await OIDCBinary.run(["inject", "--store", store, "--issuer", "https://i", "--client-id", "c", "--access-token", "a", "--token-endpoint", "http://idp.example/token"])
        #expect(insecure.status == 2)
        #expect(insecure.stderr.contains("--token-endpoint"))
        let broken = try await OIDCBinary.run(["inject", "--store", store, "--issuer", "https://i", "--client-id", "c", "--token-response", "-"], stdin: "{}")
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("access_token"))
    }
}
