import Foundation
import OIDC
import OIDCTesting

/// The authenticated session's overhead per request against the bare transport: the same
/// keep-alive `GET /api/me` to the test provider on loopback, with the bearer header added by hand
/// (bare) or by ``AuthenticatedSession`` (allowlist check, token lookup, expiry check, header).
enum SessionBenchmark {
    static func run(rounds: Int, requests: Int) async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let store = InMemoryTokenStore()
                let login = try await provider.logIn(into: store)
                let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer)
                let session = AuthenticatedSession(
                    store: store, key: TokenStoreKey(service: "oidc", account: "test-client"),
                    source: .refreshToken(TokenClient(provider: try metadata.configuration(), clientID: "test-client", transport: transport)),
                    transport: transport, allowlist: .default(for: URL(string: provider.issuer)!)
                )
                let url = URL(string: provider.protectedResourceURL)!
                let bare = HTTPRequest(url: url, headers: ["Authorization": "Bearer " + login.tokens.accessToken.revealedValue])
                let plain = HTTPRequest(url: url)
                // Warm up both paths (connections, the session's first store read).
                for _ in 0..<200 {
                    _ = try await transport.send(bare)
                    _ = try await session.send(plain)
                }
                var bareTimes: [Double] = [], sessionTimes: [Double] = []
                let clock = ContinuousClock()
                for _ in 0..<rounds {
                    var start = clock.now
                    for _ in 0..<requests { guard try await transport.send(bare).status == 200 else { fatalError("bare request failed") } }
                    bareTimes.append(seconds(clock.now - start) / Double(requests) * 1e6)
                    start = clock.now
                    for _ in 0..<requests { guard try await session.send(plain).status == 200 else { fatalError("session request failed") } }
                    sessionTimes.append(seconds(clock.now - start) / Double(requests) * 1e6)
                }
                let b = median(bareTimes), s = median(sessionTimes)
                print("Authenticated session vs bare transport, GET /api/me on loopback, keep-alive, \(rounds) interleaved rounds of \(requests) requests, medians")
                print(String(format: "bare transport   %8.1f µs/request  (%6.0f requests/s)", b, 1e6 / b))
                print(String(format: "session          %8.1f µs/request  (%6.0f requests/s)", s, 1e6 / s))
                print(String(format: "overhead         %8.1f µs/request  (%.1f%%)", s - b, (s - b) / b * 100))
                #if DEBUG
                print("note: a debug build; use swift run -c release oidc-bench --session")
                #endif
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
