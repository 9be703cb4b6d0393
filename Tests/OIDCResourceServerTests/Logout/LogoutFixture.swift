import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting

/// A TestProvider over real loopback HTTP, its JWKS through a JWKSCache, and a logout-token
/// verifier for its default client with an in-memory replay store.
struct LogoutFixture: Sendable {
    let provider: TestProvider
    let keys: JWKSCache
    let replays: InMemoryReplayStore
    var verifier: LogoutTokenVerifier

    static func run<T: Sendable>(_ configuration: TestProvider.Configuration = .init(), _ body: @Sendable (LogoutFixture) async throws -> T) async throws -> T {
        let provider = try await TestProvider.start(configuration)
        do {
            let result = try await withNIOHTTPTransport { transport in
                let keys = JWKSCache(transport: transport, jwksURI: URL(string: provider.jwksURI)!, unknownKeyCooldown: 0)
                let replays = InMemoryReplayStore()
                let verifier = LogoutTokenVerifier(issuer: provider.issuer, clientID: TestProvider.Client.default.id, replayStore: replays)
                return try await body(LogoutFixture(provider: provider, keys: keys, replays: replays, verifier: verifier))
            }
            try await provider.shutdown()
            return result
        } catch {
            try? await provider.shutdown()
            throw error
        }
    }

    /// Verifies `token` with the provider's keys; the rule it broke, or `nil` when it passed.
    func refusal(_ token: String, verifier: LogoutTokenVerifier? = nil, now: Date = Date()) async -> LogoutTokenError? {
        do {
            _ = try await (verifier ?? self.verifier).verify(token, keys: keys, now: now)
            return nil
        } catch {
            return error
        }
    }
}
