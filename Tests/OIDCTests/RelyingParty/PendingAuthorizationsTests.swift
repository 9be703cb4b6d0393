import Foundation
@testable import OIDC
import Testing

@Suite("Pending authorizations of a server")
struct PendingAuthorizationsTests {
    static func request() throws -> AuthorizationRequest {
        try AuthorizationRequest(
            authorizationEndpoint: URL(string: "https://idp.example/authorize")!, clientID: "server",
            redirectURI: "https://app.example/callback", issuer: "https://idp.example"
        )
    }

    static func callback(_ request: AuthorizationRequest, state: String? = nil) -> URL {
        URL(string: "https://app.example/callback?code=c&state=\(state ?? request.state)")!
    }

    @Test("an id of 256 random bits; single use: the second end finds nothing")
    func singleUse() async throws {
        let pending = PendingAuthorizations()
        let request = try Self.request()
        let id = try await pending.begin(request)
        #expect(id.count == 43)
        #expect(try await pending.begin(Self.request()) != id)
        #expect(await pending.count == 2)
        #expect(await pending.end(id)?.state == request.state)
        #expect(await pending.end(id) == nil)
        #expect(await pending.end("unknown") == nil)
    }

    @Test("a callback with another state, a repeated state or none does not end the login; the right one does")
    func endOnlyWithTheState() async throws {
        let pending = PendingAuthorizations()
        let request = try Self.request()
        let id = try await pending.begin(request)
        #expect(await pending.end(id, callback: Self.callback(request, state: "forged")) == nil)
        #expect(await pending.end(id, callback: URL(string: "https://app.example/callback?code=c")!) == nil)
        #expect(await pending.end(id, callback: URL(string: "https://app.example/callback?state=\(request.state)&state=\(request.state)")!) == nil)
        #expect(await pending.end(id, callback: Self.callback(request))?.state == request.state)
        #expect(await pending.end(id, callback: Self.callback(request)) == nil)
    }

    @Test("a login older than the lifetime is gone")
    func expiry() async throws {
        let clock = InstantClock()
        let pending = PendingAuthorizations(lifetime: .seconds(1), capacity: 10_000, now: { clock.now })
        let request = try Self.request()
        let id = try await pending.begin(request)
        clock.advance(by: .milliseconds(1100))
        #expect(await pending.count == 0)
        #expect(await pending.end(id, callback: Self.callback(request)) == nil)
        #expect(await pending.end(id) == nil)
    }

    @Test("at capacity the oldest login makes room; the others stay")
    func capacity() async throws {
        let pending = PendingAuthorizations(capacity: 3)
        var ids: [String] = []
        for _ in 0..<5 { ids.append(try await pending.begin(Self.request())) }
        #expect(await pending.count == 3)
        #expect(await pending.end(ids[0]) == nil)
        #expect(await pending.end(ids[1]) == nil)
        for id in ids[2...] { #expect(await pending.end(id) != nil) }
        // Many logins that end at once keep the bookkeeping bounded.
        for _ in 0..<1000 { _ = await pending.end(try await pending.begin(Self.request())) }
        #expect(await pending.count == 0)
    }
}

/// A `ContinuousClock` instant the test moves by hand.
private final class InstantClock: @unchecked Sendable {
    private let lock = NSLock()
    private var instant = ContinuousClock.now
    var now: ContinuousClock.Instant { lock.withLock { instant } }
    func advance(by duration: Duration) { lock.withLock { instant += duration } }
}
