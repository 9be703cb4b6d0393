import Foundation
@testable import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The DPoP edges of a session's refresh and of a resource's challenges: a refresh that meets a
/// nonce challenge, a refresh answered with bearer tokens, and resources that challenge twice, give
/// no nonce, or refuse the proof. The logins come from TestProvider over loopback; the odd
/// resources are a raw loopback HTTP server that answers as such a resource would.
@Suite("DPoP: refresh challenges and resource refusals", .timeLimit(.scaledMinutes(1)))
struct DPoPSessionEdgeTests {
    static let storeKey = TokenStoreKey(service: "dpop-edge-tests", account: "user")

    /// A DPoP-bound login kept in a new store, and its session allowed to reach `resource` too.
    static func boundSession(
        _ provider: TestProvider, resource: URL? = nil
    ) async throws -> (session: AuthenticatedSession, store: InMemoryTokenStore, login: VerifiedLogin) {
        let rp = try await DPoPTests.dpopRelyingParty(provider)
        let (_, login) = try await DPoPTests.login(rp)
        let store = InMemoryTokenStore()
        var allowlist = HostAllowlist.default(for: provider.protectedResource)
        if let resource { allowlist = HostAllowlist.default(for: resource) }
        let session = try await rp.keep(login, in: store, as: Self.storeKey, allowlist: allowlist)
        return (session, store, login)
    }

    @Test("a refresh that meets use_dpop_nonce retries once with the same refresh token and the new nonce; it is no invalid_grant, and the login goes on")
    func refreshMeetsNonce() async throws {
        try await withTestProvider(DPoPTests.configuration(DPoPTests.nonces(at: [.token]))) { provider in
            let (session, store, login) = try await Self.boundSession(provider)
            try await provider.rotateDPoPNonce()
            await provider.resetCounters()
            let refreshed = try await session.refreshNow()
            #expect(refreshed.tokenType == "DPoP")
            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.suffix(2).map(\.error) == ["use_dpop_nonce", nil], "\(proofs.map(\.error))")
            let forms = await provider.requestParameters(.token)
            #expect(forms.count == 2)
            let sent = forms.compactMap { $0["refresh_token"] }
            #expect(sent.count == 2 && sent[0] == sent[1] && sent[0] == login.tokens.refreshToken?.revealedValue)
            #expect(await store.load(Self.storeKey)?.tokens.accessToken == refreshed.accessToken)
        }
    }

    @Test("a refresh answered with bearer tokens: senderConstraintMissing, the login ends (unboundTokens), and nothing unbound is kept")
    func refreshDowngraded() async throws {
        try await withTestProvider(DPoPTests.configuration()) { provider in
            let (session, store, _) = try await Self.boundSession(provider)
            await provider.failNextTokenRequests(1, with: .downgradeToBearer)
            let error = await #expect(throws: OIDCError.self) { try await session.refreshNow() }
            #expect(error?.code == .senderConstraintMissing, "\(String(describing: error))")
            #expect(error?.endedLogin == .unboundTokens)
            #expect(error?.endsLogin == true)
            #expect(await store.load(Self.storeKey) == nil)
        }
    }

    /// A resource at a raw loopback server that answers every request with `reply`.
    static func withResource(
        _ reply: [UInt8], _ body: (RawHTTPServer, TestProvider, AuthenticatedSession) async throws -> Void
    ) async throws {
        try await withRawHTTPServer({ _ in .bytes(reply, thenClose: true) }) { server in
            try await withTestProvider(DPoPTests.configuration()) { provider in
                let (session, _, _) = try await Self.boundSession(provider, resource: server.url("/api"))
                await provider.resetCounters()
                try await body(server, provider, session)
            }
        }
    }

    @Test("a resource that asks for a stronger login (RFC 9470 insufficient_user_authentication): no refresh, no retry; the error (insufficientUserAuthentication) names acr_values and max_age")
    func stepUpAuthentication() async throws {
        let reply = RawHTTPServer.response(status: 401, [
            ("WWW-Authenticate", #"DPoP error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:bank:sca", max_age="300", algs="ES256""#),
            ("WWW-Authenticate", "Bearer"),
        ])
        try await Self.withResource(reply) { server, provider, session in
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: server.url("/api"))) }
            #expect(error?.code == .insufficientUserAuthentication && error?.endsLogin == false, "\(String(describing: error))")
            #expect(error?.requiredACRValues == ["urn:bank:sca"] && error?.requiredMaxAge == 300)
            #expect(error?.context["acr_values"] == "urn:bank:sca" && error?.context["max_age"] == "300")
            #expect(error?.message.contains("acr_values 'urn:bank:sca' and max_age 300 s") == true, "\(String(describing: error))")
            #expect(server.requests.count == 1)
            #expect(await provider.requestCount(.token) == 0, "no refresh")
        }
    }

    @Test("a resource that asks for a new nonce twice in a row: one retry, then unauthorized, and no refresh")
    func challengedTwice() async throws {
        let reply = RawHTTPServer.response(status: 401, [("WWW-Authenticate", "DPoP error=\"use_dpop_nonce\", algs=\"ES256\""), ("DPoP-Nonce", "n-\(UUID().uuidString)")])
        try await Self.withResource(reply) { server, provider, session in
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: server.url("/api"))) }
            #expect(error?.code == .unauthorized, "\(String(describing: error))")
            #expect(error?.context["dpop"] == "use_dpop_nonce")
            #expect(server.requests.count == 2)
            let nonces = server.requests.compactMap { $0.headers.first { $0.name.lowercased() == "dpop" }?.value }
                .compactMap { try? UnverifiedJWT($0).claims["nonce"]?.stringValue }
            #expect(nonces.count == 1, "the retry carries the nonce, the first proof none")
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("a nonce challenge without a DPoP-Nonce header: no retry, no refresh, unauthorized")
    func challengeWithoutNonce() async throws {
        let reply = RawHTTPServer.response(status: 401, [("WWW-Authenticate", "DPoP error=\"use_dpop_nonce\"")])
        try await Self.withResource(reply) { server, provider, session in
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: server.url("/api"))) }
            #expect(error?.code == .unauthorized, "\(String(describing: error))")
            #expect(server.requests.count == 1)
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("a resource that refuses the proof (invalid_dpop_proof): unauthorized naming the proof, no refresh, no retry")
    func proofRefused() async throws {
        let reply = RawHTTPServer.response(status: 401, [("WWW-Authenticate", "DPoP error=\"invalid_dpop_proof\", error_description=\"iat out of range\"")])
        try await Self.withResource(reply) { server, provider, session in
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: server.url("/api"))) }
            #expect(error?.code == .unauthorized, "\(String(describing: error))")
            #expect(error?.context["dpop"] == "invalid_dpop_proof")
            #expect(server.requests.count == 1)
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("a plain 401 (invalid_token) at a resource still refreshes once with the login's key and retries: the DPoP refusals above are the exceptions")
    func invalidTokenRefreshes() async throws {
        let reply = RawHTTPServer.response(status: 401, [("WWW-Authenticate", "DPoP error=\"invalid_token\"")])
        try await Self.withResource(reply) { server, provider, session in
            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: server.url("/api"))) }
            #expect(error?.code == .unauthorized)
            #expect(server.requests.count == 2)
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }
}
