import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Synchronization
import Testing

/// A stage of the kind a user writes (the one of <doc:Pipelines>): it tags each request with a
/// header and counts requests by call, noting what the library had added by the time it saw them.
final class TaggingStage: HTTPStage {
    struct Seen: Sendable {
        var call: HTTPCall
        var authorizationScheme: String?
        var carriesProof: Bool
        var body: String
        var status: Int
    }

    private let seen = Mutex<[Seen]>([])
    let header: String

    init(header: String = "X-Request-ID") { self.header = header }

    /// Every request seen, in order, with the status of its answer.
    var requests: [Seen] { seen.withLock { $0 } }

    /// How many requests of `call` went through.
    func count(_ call: HTTPCall) -> Int { requests.filter { $0.call == call }.count }

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        var request = request
        request.headers.set(header, UUID().uuidString)
        let response = try await next(request)
        let scheme = request.headers["Authorization"]?.split(separator: " ").first.map(String.init)
        seen.withLock {
            $0.append(
                Seen(
                    call: call, authorizationScheme: scheme, carriesProof: request.headers["DPoP"] != nil,
                    body: String(decoding: request.body, as: UTF8.self), status: response.status))
        }
        return response
    }
}

/// A user's stage in both pipelines, against TestProvider over loopback HTTP: it sees every
/// request with what the library added (client authentication, the access token, the DPoP proof),
/// its header reaches the wire, and its count is the provider's.
@Suite("Pipelines: a user's stage", .timeLimit(.scaledMinutes(1)))
struct UserStageTests {
    static let storeKey = TokenStoreKey(service: "user-stage-tests", account: "user")

    /// The requests `recorder` sent to `url`'s path, and whether each carried `header`.
    static func tagged(_ recorder: RecordingTransport, path: String, header: String) async -> [Bool] {
        await recorder.requests.filter { $0.url.path == path }.map { $0.headers[header] != nil }
    }

    @Test("a DPoP-bound login: the resource pipeline's stage sees each attempt (the 401, the nonce retry, the retry after the refresh) with Authorization DPoP and its proof; the provider pipeline's sees the refresh and its nonce retry with the client's authentication, and userinfo; every request carries its header, and the counts are the provider's")
    func bothPipelinesWithDPoP() async throws {
        try await withTestProvider(DPoPTests.configuration(DPoPTests.nonces(at: [.token, .protectedResource]))) { provider in
            let recorder = RecordingTransport(NIOHTTPTransport.shared)
            let rp = try await DPoPTests.dpopRelyingParty(provider, transport: recorder)
            let (_, login) = try await DPoPTests.login(rp)

            // The resource pipeline: an expired token, so a 401, one refresh, one retry.
            let resourceStage = TaggingStage()
            var options = AuthenticatedSession.Options()
            options.stages = [resourceStage]
            let store = InMemoryTokenStore()
            let session = try await rp.keep(login, in: store, as: Self.storeKey, allowlist: .default(for: provider.protectedResource), options: options)
            await provider.expireAccessTokens()
            try await provider.rotateDPoPNonce()
            await provider.resetCounters()
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            #expect(await provider.grantCount("refresh_token") >= 1, "the refresh (and its nonce retry, when the token endpoint asks)")
            let resourceRequests = await provider.requestCount(.protectedResource)
            #expect(resourceRequests >= 2, "the refused one and the retry")
            #expect(resourceStage.count(.resource) == resourceRequests)
            #expect(resourceStage.requests.allSatisfy { $0.call == .resource && $0.authorizationScheme == "DPoP" && $0.carriesProof })
            #expect(resourceStage.requests.map(\.status).contains(401) && resourceStage.requests.last?.status == 200)
            let resourcePath = provider.protectedResource.path
            #expect(await Self.tagged(recorder, path: resourcePath, header: resourceStage.header).allSatisfy { $0 })
            #expect(await Self.tagged(recorder, path: resourcePath, header: resourceStage.header).count == resourceStage.count(.resource))

            // The provider pipeline: a refresh that meets a new nonce (two requests), then userinfo.
            let providerStage = TaggingStage(header: "X-Trace")
            var client = rp.tokenClient(proving: login.dpopKey)
            client.stages = [providerStage]
            let refreshToken = try #require(await store.load(Self.storeKey)?.tokens.refreshToken)
            try await provider.rotateDPoPNonce()
            await provider.resetCounters()
            let tokens = try await client.refresh(refreshToken)
            #expect(tokens.tokenType == "DPoP")
            let refreshCall = HTTPCall.provider(.grant(.refreshToken))
            #expect(providerStage.count(refreshCall) == 2, "the nonce challenge and the retry")
            let tokenRequests = await provider.requestCount(.token)
            #expect(providerStage.count(refreshCall) == tokenRequests)
            #expect(providerStage.requests.allSatisfy { $0.carriesProof && $0.body.contains("client_id=") && $0.body.contains("grant_type=refresh_token") })
            #expect(providerStage.requests.map(\.status) == [400, 200])
            _ = try await client.userinfo(accessToken: tokens.accessToken, expectedSubject: login.idToken.claims.subject)
            let userinfo = try #require(providerStage.requests.last)
            #expect(userinfo.call == .provider(.userinfo) && userinfo.authorizationScheme == "DPoP" && userinfo.carriesProof)
            let userinfoRequests = await provider.requestCount(.userinfo)
            #expect(providerStage.count(.provider(.userinfo)) == userinfoRequests)
            let tokenPath = try #require(URL(string: provider.tokenEndpoint)).path
            #expect(await Self.tagged(recorder, path: tokenPath, header: providerStage.header).suffix(2) == [true, true])
            #expect(resourceStage.count(refreshCall) == 0 && providerStage.count(.resource) == 0)
        }
    }

    @Test("a bearer login: the stage of each pipeline sees Authorization Bearer at the resource and the client's form at the token endpoint, no proof, and counts what the provider counts")
    func bothPipelinesWithBearer() async throws {
        try await withTestProvider { provider in
            let recorder = RecordingTransport(NIOHTTPTransport.shared)
            let rp = try await provider.relyingParty(transport: recorder)
            let resourceStage = TaggingStage()
            var options = AuthenticatedSession.Options()
            options.stages = [resourceStage]
            let store = InMemoryTokenStore()
            try await store.inject(try await provider.issueTokens(), issuer: provider.issuer, clientID: rp.clientID, key: Self.storeKey)
            let session = rp.session(store: store, key: Self.storeKey, allowlist: .default(for: provider.protectedResource), options: options)
            for _ in 0..<3 { #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200) }
            let resourceRequests = await provider.requestCount(.protectedResource)
            #expect(resourceStage.count(.resource) == 3 && resourceRequests == 3)
            #expect(resourceStage.requests.allSatisfy { $0.authorizationScheme == "Bearer" && !$0.carriesProof })
            #expect(await Self.tagged(recorder, path: provider.protectedResource.path, header: resourceStage.header) == [true, true, true])

            let providerStage = TaggingStage()
            var client = rp.tokenClient
            client.stages = [providerStage]
            let refreshToken = try #require(await store.load(Self.storeKey)?.tokens.refreshToken)
            _ = try await client.refresh(refreshToken)
            let tokenRequests = await provider.requestCount(.token)
            #expect(providerStage.count(.provider(.grant(.refreshToken))) == 1 && tokenRequests == 1)
            #expect(providerStage.requests.allSatisfy { !$0.carriesProof && $0.body.contains("refresh_token=") })
        }
    }
}
