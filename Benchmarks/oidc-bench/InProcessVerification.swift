import Foundation
import OIDC
import OIDCResourceServer

/// The in-process half of `scripts/bench-http.sh` (`--in-process-verify`): the verification that
/// `oidc resource-server` does for a request, of the same bearer token, with the same issuer's keys,
/// audience and resource, called directly on one task for `seconds`; prints the rate per second,
/// and the CPU microseconds per verification (this process's CPU time, so less sensitive to other
/// load than the rate), on one line, for the script to set beside wrk's figures for the server.
enum InProcessVerification {
    static func run(issuer: String, audience: String, resource: String, jwksFile: String, tokenFile: String, seconds: Double) async throws {
        guard let jwks = FileManager.default.contents(atPath: jwksFile), let tokenData = FileManager.default.contents(atPath: tokenFile),
            let base = URL(string: resource), let url = URL(string: resource + "/bench")
        else { throw OIDCError(.invalidArgument, "--in-process-verify needs a readable --jwks FILE and --token-file FILE, and a --resource URL") }
        let token = String(decoding: tokenData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let keys = Array(jwks)
        // As ResourceServerSources configures the command's server: the resource, its audience, a replay store.
        var configuration = ResourceServer.Configuration(resource: base, issuers: [TrustedIssuer(issuer: issuer, keys: JWKSCache { keys })])
        configuration.audiences = [audience]
        configuration.replayStore = InMemoryReplayStore()
        let server = try ResourceServer(configuration)
        let request = ResourceRequest(method: "GET", url: url, headers: HTTPHeaders([("Authorization", "Bearer " + token)]))
        _ = try await server.verify(request, requiring: [])
        let clock = ContinuousClock()
        let cpu = ResourceServerBenchmark.processCPUTime()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<64 { _ = try await server.verify(request, requiring: []) }
            count += 64
        }
        let elapsed = SessionBenchmark.seconds(clock.now - start)
        print(String(format: "%.0f %.1f", Double(count) / elapsed, (ResourceServerBenchmark.processCPUTime() - cpu) / Double(count) * 1e6))
    }
}
