import Foundation
import OIDC
import OIDCTesting
@testable import ReportDaemon
import Testing

/// The daemon against OIDCTesting's provider over real loopback HTTP: the provider checks every
/// client assertion (signature by the registered key, iss, sub, aud, exp, a fresh jti), and its
/// counters say how many token requests the daemon really made.
@Suite("The daemon against a provider", .timeLimit(.minutes(1)))
struct ReportDaemonTests {
    static let clientID = "report-daemon"
    /// Where a service session keeps the token unless told otherwise: the one login of the store
    /// under service `client-credentials` (its account names the client and a hash of the request).
    static func kept(in directory: URL) throws -> StoredLogin? {
        let keychain = try FileKeychain(directory: directory)
        let keys = try keychain.keys().filter { $0.service == "client-credentials" }
        #expect(keys.count == 1 && keys.first?.account.hasPrefix(clientID + "#") == true, "\(keys)")
        return try keys.first.flatMap { try keychain.load($0) }
    }

    /// The daemon registered with the public half of `key`, allowed `reports.read` only.
    static func registered(_ key: JWSSigningKey, lifetime: Int = 3600) -> TestProvider.Configuration {
        var client = TestProvider.Client.privateKeyJWT(id: clientID, jwks: JSONValue.object(["keys": .array([.object(key.publicJWK)])]).jsonText)
        client.allowedScopes = ["reports.read"]
        return TestProvider.Configuration(clients: [client], accessTokenLifetime: lifetime)
    }

    /// The one-object path: a relying party by discovery that signs its assertions with `key`, and
    /// the daemon's service session over it.
    static func daemon(_ provider: TestProvider, key: JWSSigningKey, store: any TokenStore = InMemoryTokenStore()) async throws -> ReportDaemon {
        let rp = try await RelyingParty.discover(issuer: provider.issuer, clientID: clientID, authentication: .privateKeyJWT(key))
        return ReportDaemon(relyingParty: rp, api: provider.protectedResource, scopes: ["reports.read"], store: store)
    }

    @Test("from its environment and key file: a private_key_jwt token request (no secret sent), and the API answers for the daemon")
    func fromEnvironment() async throws {
        let directory = try TemporaryDirectory()
        let key = try TestSigningKey.generate(.es256, keyID: "k1")
        var client = TestProvider.Client.privateKeyJWT(id: Self.clientID, jwks: try key.jwksJSON)
        client.allowedScopes = ["reports.read"]
        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            let configuration = try DaemonConfiguration(environment: [
                "OIDC_ISSUER": provider.issuer, "OIDC_CLIENT_ID": Self.clientID, "OIDC_PRIVATE_KEY_FILE": try directory.file("key.pem", key.pem(), mode: 0o600),
                "OIDC_KEY_ID": "k1", "OIDC_SCOPE": "reports.read", "API_URL": provider.protectedResourceURL,
                "OIDC_TOKEN_DIR": directory.path("tokens"),
            ])
            let daemon = try await ReportDaemon.start(configuration)
            #expect(daemon.summary == "client report-daemon at \(provider.issuer), private_key_jwt (JWSSigningKey(ES256, kid: k1))")
            let round = try await daemon.round()
            #expect(round.statuses == [200])
            #expect(round.firstBody.contains(#""client_id":"report-daemon""#) && round.firstBody.contains(#""scope":"reports.read""#))

            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == "client_credentials" && sent["scope"] == "reports.read")
            #expect(sent["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            #expect(sent["client_secret"] == nil && sent["client_assertion"] != nil)
            // Kept in OIDC_TOKEN_DIR, where the next run (another process) finds it.
            let kept = try #require(try Self.kept(in: URL(fileURLWithPath: directory.path("tokens"))))
            #expect(kept.issuer == provider.issuer && kept.tokens.scopes == ["reports.read"])
        }
    }

    @Test("ten concurrent sends make exactly one token request, and the next ten reuse the token")
    func oneRequestForTen() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "daemon-2026")
        try await withTestProvider(Self.registered(key)) { provider in
            let daemon = try await Self.daemon(provider, key: key)
            #expect(await provider.grantCount("client_credentials") == 0)  // nothing asked before the first call
            let first = try await daemon.round(parallel: 10)
            #expect(first.statuses == Array(repeating: 200, count: 10))
            #expect(await provider.grantCount("client_credentials") == 1)
            let second = try await daemon.round(parallel: 10)
            #expect(second.statuses == Array(repeating: 200, count: 10))
            #expect(await provider.grantCount("client_credentials") == 1)
            #expect(await provider.requestCount(.protectedResource) == 20)
        }
    }

    @Test("a token the API refuses (expired at the provider) is replaced by exactly one request for ten callers, each retried once")
    func refusedTokenReplacedOnce() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "daemon-2026")
        try await withTestProvider(Self.registered(key)) { provider in
            let daemon = try await Self.daemon(provider, key: key)
            _ = try await daemon.round()
            await provider.expireAccessTokens()
            let round = try await daemon.round(parallel: 10)
            #expect(round.statuses == Array(repeating: 200, count: 10))
            #expect(await provider.grantCount("client_credentials") == 2)
            #expect(await provider.grantCount("refresh_token") == 0)
            #expect(await provider.requestCount(.protectedResource) == 1 + 10 + 10)  // ten 401s, ten retries
        }
    }

    @Test("a token about to expire is replaced before it is used, once for ten callers, without a 401")
    func expiringTokenReplacedBeforeUse() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "daemon-2026")
        try await withTestProvider(Self.registered(key, lifetime: 3)) { provider in
            let daemon = try await Self.daemon(provider, key: key)
            _ = try await daemon.round(parallel: 10)
            #expect(await provider.grantCount("client_credentials") == 1)
            try await Task.sleep(for: .seconds(2))  // past half its 3 s life: the session replaces it first
            let round = try await daemon.round(parallel: 10)
            #expect(round.statuses == Array(repeating: 200, count: 10))
            #expect(await provider.grantCount("client_credentials") == 2)
            #expect(await provider.requestCount(.protectedResource) == 20)
        }
    }

    @Test("daemons sharing a token directory (as processes do) make one token request; the file is the user's alone")
    func sharedTokenDirectory() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "daemon-2026")
        let directory = try TemporaryDirectory()
        try await withTestProvider(Self.registered(key)) { provider in
            // Each its own relying party and store value over the same files, as separate processes have.
            let daemons = [
                try await Self.daemon(provider, key: key, store: try FileKeychain(directory: directory.url)),
                try await Self.daemon(provider, key: key, store: try FileKeychain(directory: directory.url)),
                try await Self.daemon(provider, key: key, store: try FileKeychain(directory: directory.url)),
            ]
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for daemon in daemons { group.addTask { try await daemon.round(parallel: 5).statuses } }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            #expect(statuses == Array(repeating: 200, count: 15))
            #expect(await provider.grantCount("client_credentials") == 1)

            let stored = try #require(try Self.kept(in: directory.url))
            #expect(stored.clientID == Self.clientID && stored.tokens.refreshToken == nil)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".json") }
            for file in files {
                let mode = try FileManager.default.attributesOfItem(atPath: directory.path(file))[.posixPermissions] as? NSNumber
                #expect(mode?.intValue == 0o600, "\(file)")
            }
            #expect(!files.isEmpty)
        }
    }

    enum Stranger: String, CaseIterable { case unregisteredKey = "a key the provider does not know", wrongSecret = "a wrong client secret" }

    @Test("a refused client gets a typed error (invalid_client, exit status 77), never shown its secret; the API is not called and nothing is kept", arguments: Stranger.allCases)
    func refusedClient(_ stranger: Stranger) async throws {
        let registeredKey = try JWSSigningKey.generate(.es256, keyID: "daemon-2026")
        let directory = try TemporaryDirectory()
        var configuration = Self.registered(registeredKey)
        configuration.clients.append(.confidential(id: "secret-daemon", secret: "the-right-secret-of-32-characters"))
        try await withTestProvider(configuration) { provider in
            let rp: RelyingParty
            switch stranger {
            case .unregisteredKey:
                rp = try await RelyingParty.discover(
                    issuer: provider.issuer, clientID: Self.clientID, authentication: .privateKeyJWT(try .generate(.es256, keyID: "daemon-2026")))
            case .wrongSecret:
                rp = try await RelyingParty.discover(
                    issuer: provider.issuer, clientID: "secret-daemon", authentication: .clientSecretBasic(Secret("a-wrong-secret-of-32-characters!")))
            }
            let store = try FileKeychain(directory: directory.url)
            let daemon = ReportDaemon(relyingParty: rp, api: provider.protectedResource, store: store)
            let error = await #expect(throws: OIDCError.self) { try await daemon.round(parallel: 3) }
            #expect(error?.providerError?.error == "invalid_client")
            #expect(error?.category == .provider && error?.endsLogin == false)
            #expect(error.map { DaemonExit.status(for: $0) } == DaemonExit.refused)
            #expect(error?.description.contains("secret-of-32") == false)
            #expect(await provider.requestCount(.protectedResource) == 0)
            #expect(try store.keys().isEmpty)
        }
    }

    @Test("a client secret from its file goes in HTTP Basic, never in the body, and no output shows it or the token")
    func clientSecret() async throws {
        let directory = try TemporaryDirectory()
        let secret = "s3cret-0123456789-0123456789-abcd"
        try await withTestProvider(TestProvider.Configuration(clients: [.confidential(id: "secret-daemon", secret: secret)])) { provider in
            let daemon = try await ReportDaemon.start(try DaemonConfiguration(environment: [
                "OIDC_ISSUER": provider.issuer, "OIDC_CLIENT_ID": "secret-daemon", "API_URL": provider.protectedResourceURL,
                "OIDC_CLIENT_SECRET_FILE": try directory.file("secret", secret + "\n", mode: 0o600),
            ]))
            let round = try await daemon.round(parallel: 2)
            #expect(round.statuses == [200, 200])
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["client_secret"] == nil && sent["client_assertion"] == nil && sent["grant_type"] == "client_credentials")

            let token = try await daemon.session.validTokens().accessToken.revealedValue
            let check = try await daemon.checkToken()
            for shown in [daemon.summary, "\(round)", ReportDaemon.describe(check), String(reflecting: daemon.relyingParty.tokenClient)] {
                #expect(!shown.contains(secret) && !shown.contains(token))
            }
            #expect(daemon.summary.hasSuffix("client_secret_basic"))
        }
    }

    @Test("the preflight check: the provider says the daemon's token is active, for this client and scope; an expired one is not, until the next call replaces it")
    func introspection() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "daemon-2026")
        try await withTestProvider(Self.registered(key)) { provider in
            let daemon = try await Self.daemon(provider, key: key)
            let check = try await daemon.checkToken()
            #expect(check.active && check.clientID == Self.clientID && check.subject == Self.clientID && check.scopes == ["reports.read"])
            #expect(ReportDaemon.describe(check).hasPrefix("active, client report-daemon, subject report-daemon, scope reports.read, expires "))

            await provider.expireAccessTokens()
            let expired = try await daemon.checkToken()
            #expect(!expired.active && ReportDaemon.describe(expired).hasPrefix("not active"))
            _ = try await daemon.round()
            #expect(try await daemon.checkToken().active)
            #expect(await provider.grantCount("client_credentials") == 2)
            #expect(await provider.requestCount(.introspection) == 3)
        }
    }
}
