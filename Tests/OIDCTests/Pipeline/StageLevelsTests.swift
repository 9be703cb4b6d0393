import Foundation
import OIDC
import OIDCTesting
import Synchronization
import Testing

// A user's program, written against the public API only (no test support): stages at the three
// levels the library offers, on one relying party, against TestProvider over loopback HTTP.

/// (a) An OAuth-level stage of the provider pipeline: a custom form parameter on every token request.
private final class TenantParameter: ProviderStage {
    private let calls = Mutex(0)
    /// How many token requests it saw.
    var count: Int { calls.withLock { $0 } }

    func intercept(_ request: ProviderRequest, next: ProviderStage.Next) async throws(OIDCError) -> HTTPResponse {
        guard request.call.grantType != nil else { return try await next(request) }
        calls.withLock { $0 += 1 }
        var request = request
        request.form.append(OAuthParameter("x_tenant", "blue"))
        return try await next(request)
    }
}

/// (b) A per-call stage: counts logical calls, their outcome and how many attempts each took.
private final class CallCounter: CallStage {
    struct Call: Equatable, Sendable {
        var call: HTTPCall
        var outcome: String
        var attempts: Int
    }

    private let calls = Mutex<[Call]>([])
    var seen: [Call] { calls.withLock { $0 } }
    func reset() { calls.withLock { $0 = [] } }

    func intercept(_ call: LogicalCall, next: CallStage.Next) async throws(OIDCError) -> HTTPResponse {
        do {
            let response = try await next()
            calls.withLock { $0.append(Call(call: call.call, outcome: "\(response.status)", attempts: call.attempts)) }
            return response
        } catch {
            calls.withLock { $0.append(Call(call: call.call, outcome: "\(error.code)", attempts: call.attempts)) }
            throw error
        }
    }
}

// (c) A per-attempt stage: `TaggingStage` (UserStageTests), which notes what each request carries as it leaves.

@Suite("Pipelines: a user's stages at three levels (OAuth request, logical call, attempt)", .timeLimit(.minutes(2)))
struct StageLevelsTests {
    /// The `client_assertion` of a form body.
    static func assertion(in body: String) -> String? {
        body.split(separator: "&").first { $0.hasPrefix("client_assertion=") }.map { String($0.dropFirst("client_assertion=".count)) }
    }

    @Test("a DPoP login, a forced refresh and a resource call that meets a 401 nonce challenge: one logical call each, with the attempts the provider counted; the custom parameter on every token request on the wire; each attempt seen with its DPoP proof and Authorization header")
    func threeLevels() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "stage-levels-1")
        let client = TestProvider.Client.privateKeyJWT(id: "stage-levels", keys: [key], redirectURIs: ["http://127.0.0.1:9/callback"])
        var configuration = TestProvider.Configuration(clients: [client])
        configuration.dpop = TestProvider.DPoP(nonces: .required(at: [.token, .protectedResource], rotatingAfter: nil))
        try await withTestProvider(configuration) { provider in
            let counter = CallCounter(), watcher = TaggingStage(), tenant = TenantParameter()
            let rp = try await provider.relyingParty(
                client: client, authentication: .privateKeyJWT(key),
                configuration: RelyingParty.Configuration(
                    dpop: .on, providerStages: [watcher], resourceStages: [watcher], providerRequestStages: [tenant], callStages: [counter]))

            // A DPoP login: the code exchange meets the token endpoint's nonce challenge and is retried once.
            let request = try rp.authorizationRequest(redirectURI: "http://127.0.0.1:9/callback")
            let page = try await rp.transport.send(
                HTTPRequest(url: try await rp.authorizationURL(for: request)), options: HTTPRequestOptions(followRedirects: false))
            let callback = try #require(page.headers["Location"].flatMap(URL.init(string:)))
            let login = try await rp.completeLogin(callback: callback, for: request)
            let exchange = HTTPCall.provider(.grant(.authorizationCode))
            #expect(counter.seen == [.init(call: exchange, outcome: "200", attempts: 2)])
            #expect(await provider.requestCount(.token) == 2)
            #expect(watcher.requests.map(\.status) == [400, 200])
            #expect(watcher.requests.allSatisfy { $0.call == exchange && $0.carriesProof && $0.body.contains("x_tenant=blue") })
            #expect(tenant.count == 1, "the OAuth-level stage runs once per call, outside the nonce retry")
            // What the provider itself received: the parameter on both attempts of the exchange.
            #expect(await provider.requestParameters(.token).map { $0["x_tenant"] } == ["blue", "blue"])
            // Client authentication is made afresh for the retry: two different assertions.
            let assertions = watcher.requests.map { Self.assertion(in: $0.body) }
            #expect(assertions.count == 2 && assertions.allSatisfy { $0 != nil } && assertions[0] != assertions[1])

            // A forced refresh, after the nonce changed: one logical call, two attempts.
            let store = InMemoryTokenStore()
            let key = TokenStoreKey(service: "stage-levels", account: "user")
            try await rp.save(login, in: store, as: key)
            let session = rp.session(store: store, key: key, allowlist: .default(for: provider.protectedResource))
            try await provider.rotateDPoPNonce()
            await provider.resetCounters()
            counter.reset()
            var seen = watcher.requests.count
            _ = try await session.validTokens(forceRefresh: true)
            let refresh = HTTPCall.provider(.grant(.refreshToken))
            #expect(counter.seen == [.init(call: refresh, outcome: "200", attempts: 2)])
            #expect(await provider.requestCount(.token) == 2)
            let refreshAttempts = watcher.requests.dropFirst(seen)
            #expect(refreshAttempts.count == 2 && refreshAttempts.allSatisfy { $0.call == refresh && $0.carriesProof && $0.body.contains("x_tenant=blue") })
            #expect(tenant.count == 2)

            // A resource call whose first attempt meets a 401 nonce challenge: one logical call, two attempts, no refresh.
            try await provider.rotateDPoPNonce()
            await provider.resetCounters()
            counter.reset()
            seen = watcher.requests.count
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            #expect(counter.seen == [.init(call: .resource, outcome: "200", attempts: 2)])
            #expect(await provider.requestCount(.protectedResource) == 2)
            #expect(await provider.requestCount(.token) == 0)
            let resourceAttempts = watcher.requests.dropFirst(seen)
            #expect(resourceAttempts.map(\.status) == [401, 200])
            #expect(resourceAttempts.allSatisfy { $0.call == .resource && $0.authorizationScheme == "DPoP" && $0.carriesProof })

            // A resource call whose token the resource refuses (401): one refresh, a logical call of its
            // own at the provider, inside the resource call, which then has two attempts.
            await provider.expireAccessTokens()
            counter.reset()
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            #expect(counter.seen == [.init(call: refresh, outcome: "200", attempts: 1), .init(call: .resource, outcome: "200", attempts: 2)])

            // A refused call is one logical call too, its outcome the error.
            counter.reset()
            await #expect(throws: OIDCError.self) { try await rp.tokenClient.refresh(Secret("not-a-refresh-token")) }
            #expect(counter.seen.map(\.outcome) == ["providerError"] && counter.seen.first?.call == refresh)
        }
    }
}
