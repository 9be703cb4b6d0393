import Foundation
@testable import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Security review 4, I2: a provider whose request URIs live 1 s must not get a push every 0.75 s
/// while a login waits: the renewal waits at least ``LoopbackLogin/minimumRenewalDelay``.
@Suite("Pushed authorization requests: the renewal's floor", .timeLimit(.scaledMinutes(1)))
struct PushedAuthorizationRenewalTests {
    /// The delays the renewal asked to sleep; the sleep itself returns at once (no wall clock).
    actor Delays {
        private(set) var values: [Duration] = []
        func add(_ delay: Duration) -> Int {
            values.append(delay)
            return values.count
        }
    }

    @Test("request URIs that live 1 s: each renewal waits at least 10 s, and the login still renews")
    func floor() async throws {
        var configuration = TestProvider.Configuration()
        configuration.pushedAuthorizationRequests = .required
        configuration.pushedRequestLifetime = 1
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty()
            let listener = try await LoopbackRedirectListener.start()
            let request = try rp.authorizationRequest(redirectURI: listener.redirectURI)
            let target = try await rp.authorizationTarget(for: request)
            try listener.serve(request, redirectingTo: target.url)
            let delays = Delays()
            let clock = LoginClock(sleep: { delay in
                // The fourth wait ends the renewal, as the end of the login would.
                if await delays.add(delay) >= 4 { throw CancellationError() }
            })
            await LoopbackLogin.renewAuthorizationURL(request, expiresAt: try #require(target.expiresAt), listener: listener, rp, logger: nil, clock: clock)
            await listener.close()
            let waited = await delays.values
            #expect(waited.count == 4)
            #expect(waited.allSatisfy { $0 >= .seconds(10) }, "\(waited)")
            // The first push, and one renewal after each of the first three waits.
            #expect(await provider.requestCount(.pushedAuthorization) == 4)
        }
    }

    @Test("a long-lived request URI is still renewed a quarter of its life (at most 10 s) before it expires")
    func longLived() async throws {
        #expect(LoopbackLogin.renewalDelay(secondsLeft: 60) == .seconds(50))
        #expect(LoopbackLogin.renewalDelay(secondsLeft: 20) == .seconds(15))
        #expect(LoopbackLogin.renewalDelay(secondsLeft: 12) == .seconds(10))
        #expect(LoopbackLogin.renewalDelay(secondsLeft: 1) == .seconds(10))
        #expect(LoopbackLogin.renewalDelay(secondsLeft: -5) == .seconds(10))
    }
}
