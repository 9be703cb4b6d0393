import Foundation
import OIDC
import OIDCTesting
import Synchronization
import OIDCTestSupport
import Testing

/// DPoP (RFC 9449) against glewlwyd 2.7.5, whose `oidc` issuer requires nonces (each usable 10
/// times, shared by its token and userinfo endpoints, a new one given on a 200 when it rotates)
/// and whose `swift-dpop` client must have DPoP-bound tokens (docs/glewlwyd.md, "DPoP").
@Suite(
    "DPoP against glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_DPOP_CLIENT_ID"] != nil, "set the OIDC_GLEWLWYD_* variables (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydDPoPTests {
    typealias Glewlwyd = GlewlwydInteropTests

    func relyingParty(_ transport: ExchangeRecorder, issuer: String = Glewlwyd.issuer) async throws -> RelyingParty {
        var rp = try await RelyingParty.discover(
            issuer: issuer, clientID: try Glewlwyd.variable("DPOP_CLIENT_ID"), clientSecret: try Glewlwyd.secret("DPOP_CLIENT_SECRET_FILE"),
            transport: transport
        )
        rp.dpop = .on
        return rp
    }

    @Test("a DPoP code login: dpop_jkt at authorization, the exchange through glewlwyd's nonce challenge (one retry), a DPoP token bound to the login's key; then the session's userinfo requests and a refresh, through nonce challenges and rotations, never refreshing on one")
    func codeLoginAndSession() async throws {
        let recorder = ExchangeRecorder()
        let rp = try await relyingParty(recorder)
        #expect(rp.provider.dpopSigningAlgorithms.contains("ES256"))
        let redirectURI = try Glewlwyd.variable("REDIRECT_URI")
        let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Glewlwyd.scope])
        let key = try #require(request.dpopKey)
        let url = try await rp.authorizationURL(for: request)
        #expect(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "dpop_jkt" }?.value == key.thumbprint)

        let agent = try await Glewlwyd.Agent.run(["authorize", url.absoluteString])
        #expect(agent.status == 0, "\(agent.output)")
        let callback = try #require(agent.output.split(separator: "\n").map(String.init).first { $0.hasPrefix(redirectURI) }.flatMap(URL.init(string:)))
        let tokenEndpoint = try #require(rp.provider.tokenEndpoint)
        let login = try await rp.completeLogin(callback: callback, for: request)
        #expect(login.tokens.tokenType == "DPoP")
        #expect(login.dpopKey == key)
        // glewlwyd's first answer is the nonce challenge; the code was not spent, the retry has it.
        let exchange = recorder.exchanges(to: tokenEndpoint)
        #expect(exchange.map(\.status) == [400, 200], "\(exchange)")
        #expect(exchange.allSatisfy { $0.proof != nil })
        #expect(exchange.first?.proof?.nonce == nil && exchange.last?.proof?.nonce != nil)
        #expect(Set(exchange.compactMap(\.proof?.jti)).count == 2, "each attempt has its own jti")
        #expect(exchange.allSatisfy { $0.proof?.htu == tokenEndpoint.absoluteString && $0.proof?.htm == "POST" })
        let introspection = try await rp.tokenClient.introspect(login.tokens.accessToken)
        #expect(introspection.active)
        #expect(introspection.raw["cnf"]?.objectValue?["jkt"]?.stringValue == key.thumbprint)

        // The session: the token endpoint's nonce serves userinfo too (glewlwyd shares it), and
        // each rotation (after 10 uses) comes on a 200 or as a challenge: one retry, no refresh.
        let store = InMemoryTokenStore()
        let userinfo = try #require(rp.provider.userinfoEndpoint)
        let session = try await rp.keep(login, in: store, as: TokenStoreKey(service: "dpop", account: "user"), allowlist: .default(for: userinfo))
        for _ in 0..<12 {
            let response = try await session.send(HTTPRequest(url: userinfo))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
        let calls = recorder.exchanges(to: userinfo)
        #expect(calls.filter { $0.status == 200 }.count == 12)
        #expect(calls.count <= 14, "at most one retry per rotation: \(calls.map(\.status))")
        #expect(calls.allSatisfy { $0.authorization?.hasPrefix("DPoP ") == true && $0.proof?.ath != nil && $0.proof?.htm == "GET" })
        #expect(recorder.exchanges(to: tokenEndpoint).count == 2, "a nonce challenge at the resource never refreshes")

        // A refresh proves the same key (glewlwyd binds the refresh token too).
        let refreshed = try await session.refreshNow()
        #expect(refreshed.tokenType == "DPoP")
        #expect(refreshed.accessToken != login.tokens.accessToken)
        #expect(await store.load(TokenStoreKey(service: "dpop", account: "user"))?.dpopKey == key)
        #expect(try await session.send(HTTPRequest(url: userinfo)).status == 200)
    }

    @Test("a DPoP service session (client credentials): the tokens bound to a key the stored login keeps; without DPoP this client gets nothing")
    func serviceSessionAndForeignKey() async throws {
        let recorder = ExchangeRecorder()
        let rp = try await relyingParty(recorder)
        let tokenEndpoint = try #require(rp.provider.tokenEndpoint)
        let store = InMemoryTokenStore()
        let key = TokenStoreKey(service: "dpop", account: "service")
        let session = rp.serviceSession(scopes: [Glewlwyd.scope], allowlist: .default(for: tokenEndpoint), store: store, key: key)
        let tokens = try await session.validTokens()
        #expect(tokens.tokenType == "DPoP")
        let stored = try #require(await store.load(key))
        let bound = try #require(stored.dpopKey)
        #expect(stored.dpopThumbprint == bound.thumbprint)
        let introspection = try await rp.tokenClient.introspect(tokens.accessToken)
        #expect(introspection.raw["cnf"]?.objectValue?["jkt"]?.stringValue == bound.thumbprint)
        #expect(introspection.raw["token_type"]?.stringValue == "DPoP")

        // Without DPoP, this client gets nothing: glewlwyd refuses unbound tokens for it.
        var bearer = rp
        bearer.dpop = .off
        await #expect(throws: OIDCError.self) { try await bearer.tokenClient.clientCredentials(scopes: [Glewlwyd.scope]) }
    }

    @Test("the nonce-less issuer: the first proof is taken, no retry")
    func withoutNonces() async throws {
        let recorder = ExchangeRecorder()
        let rp = try await relyingParty(recorder, issuer: try Glewlwyd.variable("NONONCE_ISSUER"))
        let tokens = try await rp.tokenClient(proving: try rp.makeDPoPKey()).clientCredentials(scopes: [Glewlwyd.scope])
        #expect(tokens.tokenType == "DPoP")
        #expect(recorder.exchanges(to: try #require(rp.provider.tokenEndpoint)).map(\.status) == [200])
    }
}

/// The real transport, noting each exchange: where it went, its status, its `Authorization`
/// scheme and its DPoP proof's claims (decoded, not verified: the server verifies).
final class ExchangeRecorder: HTTPTransport {
    struct Proof: Sendable, CustomStringConvertible {
        var jti: String?, htm: String?, htu: String?, nonce: String?, ath: String?
        var description: String { "proof(htm: \(htm ?? "-"), nonce: \(nonce == nil ? "no" : "yes"), ath: \(ath == nil ? "no" : "yes"))" }
    }

    struct Exchange: Sendable, CustomStringConvertible {
        var url: URL, status: Int, authorization: String?, proof: Proof?
        var description: String { "\(status) \(url.path) \(proof?.description ?? "no proof")" }
    }

    private let inner: any HTTPTransport
    private let log = Mutex<[Exchange]>([])

    init(_ inner: any HTTPTransport = NIOHTTPTransport.shared) { self.inner = inner }

    func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse {
        let response = try await inner.send(request, options: options)
        let proof = request.headers["DPoP"].flatMap(Self.claims).map {
            Proof(
                jti: $0["jti"]?.stringValue, htm: $0["htm"]?.stringValue, htu: $0["htu"]?.stringValue, nonce: $0["nonce"]?.stringValue,
                ath: $0["ath"]?.stringValue)
        }
        let scheme = request.headers["Authorization"].map { String($0.prefix { $0 != " " }) + " " }
        log.withLock { $0.append(Exchange(url: request.url, status: response.status, authorization: scheme, proof: proof)) }
        return response
    }

    func exchanges(to url: URL) -> [Exchange] { log.withLock { $0.filter { $0.url == url } } }

    static func claims(_ jws: String) -> [String: JSONValue]? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return nil }
        return try? StrictJSON.parseObject(bytes)
    }
}
