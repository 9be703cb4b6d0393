import Foundation
import Logging
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The library's logging against TestProvider over real loopback HTTP, every component at `trace`:
/// each line a handler could print is checked for every secret the run produced.
@Suite("Logging", .timeLimit(.scaledMinutes(2)))
struct LoggingTests {
    static let clientID = "log-client"

    /// The tokens of `tokens`, as sent and stored.
    static func secrets(of tokens: TokenSet?) -> [String] {
        guard let tokens else { return [] }
        return [tokens.accessToken, tokens.refreshToken, tokens.idToken].compactMap { $0?.revealedValue }
    }

    @Test("a login, a refresh on 401, a rejected refresh and a logout, all logged at trace: no line holds a token, code, verifier, state, nonce or the client secret, and the refresh and logout lines are there")
    func noSecretInAnyLine() async throws {
        let recorder = LogRecorder()
        let clientSecret = "client-secret-" + UUID().uuidString
        let client = TestProvider.Client.confidential(id: Self.clientID, secret: clientSecret)
        var secrets = [clientSecret, Data("\(Self.clientID):\(clientSecret)".utf8).base64EncodedString()]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-logging-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var issuer = ""

        try await withTestProvider(TestProvider.Configuration(clients: [client], authorizeBehaviour: .loginPage)) { provider in
            issuer = provider.issuer
            try await withNIOHTTPTransport(logger: recorder.logger("oidc.transport")) { transport in
                // Discovery, twice: a fetch, then a cache hit.
                let discovery = ProviderDiscovery(transport: transport, logger: recorder.logger("oidc.discovery"))
                let configuration = try await discovery.metadata(for: provider.issuer).configuration(confidential: true)
                _ = try await discovery.metadata(for: provider.issuer)

                // The browser login through the loopback listener; a forged callback first.
                let listener = try await LoopbackRedirectListener.start(logger: recorder.logger("oidc.loopback"))
                let request = try AuthorizationRequest(provider: configuration, clientID: Self.clientID, redirectURI: listener.redirectURI)
                try listener.serve(request)
                let forgedCode = "forged-code-" + UUID().uuidString
                let forged = try await transport.send(HTTPRequest(url: URL(string: "\(listener.redirectURI)?code=\(forgedCode)&state=wrong-state")!))
                #expect(forged.status == 400)
                let browsing = Task { try await TestBrowser().open(listener.startURL) }
                let response = try await listener.waitForAuthorization(request, timeout: .scaled(.seconds(30)))
                _ = try await browsing.value
                secrets += [response.code.revealedValue, request.state, forgedCode, String(listener.startURL.path.dropFirst())]
                secrets += [try #require(request.pkce).verifier.revealedValue, try #require(request.nonce)]

                // Code exchange and ID-token verification.
                let tokenClient = TokenClient(
                    provider: configuration, clientID: Self.clientID, clientSecret: Secret(clientSecret), transport: transport,
                    logger: recorder.logger("oidc.token")
                )
                let keys = JWKSCache(transport: transport, jwksURI: try #require(configuration.jwksURI), logger: recorder.logger("oidc.jwks"))
                let login = try await tokenClient.completeLogin(response, for: request, keys: keys)
                secrets += Self.secrets(of: login.tokens)

                let store = try FileKeychain(directory: directory, logger: recorder.logger("oidc.store"))
                let key = TokenStoreKey(service: "oidc", account: "log-test")
                try store.save(StoredLogin(login), for: key)
                let session = AuthenticatedSession(
                    store: store, key: key, source: .refreshToken(tokenClient), transport: transport,
                    allowlist: .default(for: URL(string: provider.issuer)!), options: AuthenticatedSession.Options(refreshedIDTokenKeys: keys),
                    logger: recorder.logger("oidc.session")
                )

                // A request whose access token the resource refuses: one refresh, one retry. Its
                // query carries a value that must not be logged either.
                await provider.expireAccessTokens()
                let probe = "query-secret-" + UUID().uuidString
                let resource = HTTPRequest(url: URL(string: provider.protectedResourceURL + "?probe=\(probe)")!)
                secrets.append(probe)
                #expect(try await session.send(resource).status == 200)
                #expect(await provider.grantCount("refresh_token") == 1)
                secrets += Self.secrets(of: try store.load(key)?.tokens)

                // A refresh the provider rejects: logged out.
                await provider.failNextTokenRequests(1, with: .invalidGrant)
                await #expect(throws: OIDCError.self) { try await session.refreshNow() }
                #expect(try store.load(key) == nil)

                // Logged in again, then a logout that revokes.
                let again = try await provider.issueTokens(clientID: Self.clientID)
                secrets += Self.secrets(of: again)
                try await store.inject(again, issuer: provider.issuer, clientID: Self.clientID, key: key)
                let second = AuthenticatedSession(
                    store: store, key: key, source: .refreshToken(tokenClient), transport: transport,
                    allowlist: .default(for: URL(string: provider.issuer)!), logger: recorder.logger("oidc.session")
                )
                #expect(try await second.send(resource).status == 200)
                try await second.logout()
                #expect(await provider.requestCount(.revocation) == 1)
            }
        }

        let lines = recorder.all
        #expect(lines.count > 30)
        for line in lines {
            for secret in secrets where !secret.isEmpty {
                #expect(!line.rendered.contains(secret), "a secret is in the log line: \(line.label): \(line.message)")
            }
            #expect(!line.rendered.contains("Bearer ") && !line.rendered.contains("Basic "), "\(line.rendered)")
        }

        // The refresh on 401.
        #expect(!recorder.lines("oidc.session", "resource refused the access token (401); refreshing once").isEmpty)
        let refreshing = recorder.lines("oidc.session", "refreshing tokens")
        #expect(refreshing.contains { $0.metadata["reason"] == "unauthorized" && $0.metadata["grant_type"] == "refresh_token" })
        #expect(refreshing.allSatisfy { $0.metadata["issuer"]?.description == issuer })
        let refreshed = try #require(recorder.lines("oidc.session", "tokens refreshed").first)
        #expect(refreshed.metadata["refresh_token_rotated"] == "true")
        #expect(refreshed.metadata["id_token"] == "verified")
        #expect(recorder.lines("oidc.token", "tokens issued").contains { $0.metadata["grant_type"] == "refresh_token" && $0.metadata["expires_in"] != nil })
        // The rejected refresh and its logout, at notice.
        let rejected = try #require(recorder.lines("oidc.session", "refresh rejected by the provider; logging out").first)
        #expect(rejected.level == .notice)
        #expect(rejected.metadata["oauth_error"] == "invalid_grant")
        let logouts = recorder.lines("oidc.session", "logged out")
        #expect(logouts.contains { $0.level == .notice && $0.metadata["reason"] == "refresh_rejected" })
        // The logout that revokes.
        #expect(logouts.contains { $0.level == .debug && $0.metadata["reason"] == "user_initiated" })
        #expect(!recorder.lines("oidc.token", "token revoked").isEmpty)
        // The other components' normal path.
        #expect(!recorder.lines("oidc.discovery", "discovery cache hit").isEmpty)
        #expect(!recorder.lines("oidc.jwks", "JWKS fetched").isEmpty)
        #expect(recorder.lines("oidc.jwks", "ID token verified").contains { $0.metadata["kid"] != nil })
        #expect(!recorder.lines("oidc.loopback", "callback received with a code").isEmpty)
        #expect(recorder.lines("oidc.loopback", "callback without this login's state ignored (missing, repeated or wrong)").first?.level == .notice)
        #expect(!recorder.lines("oidc.store", "store lock taken").isEmpty)
        let exchanges = recorder.lines("oidc.transport", "HTTP response")
        #expect(exchanges.contains { $0.metadata["status"]?.description == "401" })
        #expect(exchanges.allSatisfy { $0.metadata["url"]?.description.contains("?") == false })
    }

    @Test("without a logger, each component logs to a handler that discards every level")
    func disabledByDefault() async throws {
        // swift-log then evaluates neither a message nor its metadata: logging off costs a level check.
        let transport = NIOHTTPTransport()
        defer { Task { try? await transport.shutdown() } }
        #expect(transport.logger.logLevel == .critical)
        #expect(transport.logger.handler is SwiftLogNoOpLogHandler)
        let cache = JWKSCache { [] }
        #expect(cache.logger.handler is SwiftLogNoOpLogHandler)
        let store = try FileKeychain(directory: FileManager.default.temporaryDirectory)
        #expect(store.logger.handler is SwiftLogNoOpLogHandler)
    }
}
