import COpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import OIDC
import OIDCResourceServer
import OIDCTesting

/// The resource server's costs (`--resource-server`):
///
/// - a DPoP request through ``ResourceServer/verify(_:requiring:)`` (header parsing, the RFC 9068
///   token, the proof, `ath`, `cnf.jkt`, the replay store) beside the two bare OpenSSL signature
///   verifications such a request needs (the token's, the proof's), for an RS256 and an ES256 token
///   with an ES256 proof;
/// - the throughput of two tasks verifying at once (the global executor's threads) beside one,
///   for bearer tokens and for DPoP requests (which share the replay store).
///
/// Every proof is made before the timing starts, one per request (a proof is good once), and each
/// round has a new server, so a new replay store. The clock is fixed: no token expires mid-run.
enum ResourceServerBenchmark {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let issuer = "https://idp.example.com"
    static let url = URL(string: "https://api.example.com/v1/orders")!

    /// A token's signer, its JWKS and a bound DPoP key.
    struct Fixture {
        let algorithm: JWSAlgorithm
        let jwks: [UInt8]
        let token: String
        let bearerToken: String
        let key: DPoPKey
        let tokenVerifier: BareVerifier
        let proofVerifier: BareVerifier

        init(_ algorithm: JWSAlgorithm) throws {
            self.algorithm = algorithm
            let signer = try TestSigningKey.generate(algorithm, keyID: "bench-\(algorithm.rawValue)")
            var members = [try signer.publicJWK()]
            for other in [JWSAlgorithm.rs256, .es256] { members.append(try TestSigningKey.generate(other, keyID: "other-\(other.rawValue)").publicJWK()) }
            jwks = Array(try JSONSerialization.data(withJSONObject: ["keys": members]))
            key = try DPoPKey.generate(.es256)
            let seconds = Int(ResourceServerBenchmark.now.timeIntervalSince1970)
            let claims: [String: Any] = [
                "iss": ResourceServerBenchmark.issuer, "sub": "248289761001", "aud": "https://api.example.com/", "client_id": "s6BhdRkqt3",
                "scope": "openid orders:read orders:write", "iat": seconds - 10, "exp": seconds + 3600, "jti": "a6b2c1e0-bench",
            ]
            token = try signer.sign(claims: claims.merging(["cnf": ["jkt": key.thumbprint]]) { $1 }, extraHeader: ["typ": "at+jwt"])
            bearerToken = try signer.sign(claims: claims, extraHeader: ["typ": "at+jwt"])
            tokenVerifier = try BareVerifier(der: try signer.publicKeyDER(), algorithm: algorithm, token: token)
            let proof = try key.proof(method: "GET", url: ResourceServerBenchmark.url, accessToken: Secret(token), now: ResourceServerBenchmark.now)
            proofVerifier = try BareVerifier(privateKeyPEM: try key.privateKeyPEM(), algorithm: .es256, token: proof)
        }

        /// A server with a new replay store, its keys already fetched.
        func server() async throws -> ResourceServer {
            let jwks = jwks
            let cache = JWKSCache(now: { ResourceServerBenchmark.now }, fetch: { jwks })
            var configuration = ResourceServer.Configuration(
                resource: URL(string: "https://api.example.com/")!, issuers: [TrustedIssuer(issuer: ResourceServerBenchmark.issuer, keys: cache)]
            )
            configuration.now = { ResourceServerBenchmark.now }
            configuration.replayStore = InMemoryReplayStore(now: { ResourceServerBenchmark.now })
            let server = try ResourceServer(configuration)
            _ = try await server.verify(bearerRequest(), requiring: ["orders:read"])
            return server
        }

        func bearerRequest() -> ResourceRequest {
            ResourceRequest(method: "GET", url: ResourceServerBenchmark.url, headers: HTTPHeaders([("Authorization", "Bearer " + bearerToken)]))
        }

        /// `count` DPoP requests, each with its own proof.
        func dpopRequests(_ count: Int) throws -> [ResourceRequest] {
            try (0..<count).map { _ in
                let proof = try key.proof(method: "GET", url: ResourceServerBenchmark.url, accessToken: Secret(token), now: ResourceServerBenchmark.now)
                return ResourceRequest(method: "GET", url: ResourceServerBenchmark.url, headers: HTTPHeaders([("Authorization", "DPoP " + token), ("DPoP", proof)]))
            }
        }
    }

    /// For perf or callgrind: `passes` times the same `requests` DPoP requests (RS256 token, ES256
    /// proof), each pass on a new server (a new replay store); or, with `bearer`, an ES256 bearer
    /// token `passes × requests` times. No timing, no bare loop.
    static func profile(passes: Int, requests: Int, bearer: Bool) async throws {
        let fixture = try Fixture(bearer ? .es256 : .rs256)
        if bearer {
            let server = try await fixture.server(), request = fixture.bearerRequest()
            for _ in 0..<passes * requests { _ = try await server.verify(request, requiring: ["orders:read"]) }
            return
        }
        let batch = try fixture.dpopRequests(requests)
        for _ in 0..<passes {
            let server = try await fixture.server()
            for request in batch { _ = try await server.verify(request, requiring: ["orders:read"]) }
        }
    }

    static func run(rounds: Int, requests: Int) async throws {
        print("Resource server (OIDCResourceServer), \(rounds) interleaved rounds of \(requests) requests, medians; OpenSSL \(OIDCLibrary.openSSLVersion)")
        print("DPoP request (token + ES256 proof + replay check) vs the two bare OpenSSL verifications it needs; wall (and CPU) µs per request")
        print("token   kit µs             bare 2×verify µs   kit/bare (CPU)   (goal ≤ 1.3)")
        var fixtures: [Fixture] = []
        for algorithm in [JWSAlgorithm.rs256, .es256] {
            let fixture = try Fixture(algorithm)
            fixtures.append(fixture)
            var kit: [Double] = [], bare: [Double] = [], ratios: [Double] = [], kitCPU: [Double] = [], bareCPU: [Double] = [], cpuRatios: [Double] = []
            for _ in 0..<rounds {
                let server = try await fixture.server()
                let batch = try fixture.dpopRequests(requests)
                var cpu = processCPUTime()
                let k = try await microseconds(requests) {
                    for request in batch { _ = try await server.verify(request, requiring: ["orders:read"]) }
                }
                let kc = (processCPUTime() - cpu) / Double(requests) * 1e6
                cpu = processCPUTime()
                let b = try await microseconds(requests) {
                    for _ in 0..<requests {
                        guard fixture.tokenVerifier.verify(), fixture.proofVerifier.verify() else { fatalError("bare verification failed") }
                    }
                }
                let bc = (processCPUTime() - cpu) / Double(requests) * 1e6
                kit.append(k); bare.append(b); ratios.append(k / b); kitCPU.append(kc); bareCPU.append(bc); cpuRatios.append(kc / bc)
            }
            print(
                algorithm.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
                    + String(
                        format: " %7.2f (%6.2f)   %7.2f (%6.2f)   %5.3f (%5.3f)", median(kit), median(kitCPU), median(bare), median(bareCPU), median(ratios),
                        median(cpuRatios))
            )
        }

        // The machine's other work takes cores from the two tasks: the load average says how much,
        // and the CPU time per request says whether the tasks slow each other down (locks,
        // shared cache lines) whatever the other load.
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "?"
        print("Two tasks at once vs one (\(ProcessInfo.processInfo.activeProcessorCount) cores, load average \(load) before), requests per second and CPU µs per request")
        print("work                  1 task/s     2 tasks/s   2/1   (goal ≥ 1.8)   CPU µs 1 task   CPU µs 2 tasks")
        for fixture in fixtures {
            let bearer = fixture.bearerRequest()
            try await scaling("bearer \(fixture.algorithm.rawValue)", rounds: rounds, requests: requests, fixture: fixture) { _ in
                { server, _ in _ = try await server.verify(bearer, requiring: ["orders:read"]) }
            }
            try await scaling("DPoP \(fixture.algorithm.rawValue)+ES256", rounds: rounds, requests: requests, fixture: fixture) { count in
                let batch = try fixture.dpopRequests(count)
                return { server, index in _ = try await server.verify(batch[index], requiring: ["orders:read"]) }
            }
        }
        #if DEBUG
        print("note: a debug build; use swift run -c release oidc-bench --resource-server")
        #endif
    }

    /// Requests per second with one task doing `requests`, and with two doing `requests` each;
    /// `work(count)` makes what request `index` (below `count`) does.
    static func scaling(
        _ name: String, rounds: Int, requests: Int, fixture: Fixture,
        work: (Int) throws -> @Sendable (ResourceServer, Int) async throws -> Void
    ) async throws {
        var one: [Double] = [], two: [Double] = [], ratios: [Double] = [], cpuOne: [Double] = [], cpuTwo: [Double] = []
        for _ in 0..<rounds {
            let server = try await fixture.server()
            let single = try work(requests)
            var cpu = processCPUTime()
            let a = 1e6 / (try await microseconds(requests) { for index in 0..<requests { try await single(server, index) } })
            cpuOne.append((processCPUTime() - cpu) / Double(requests) * 1e6)
            let shared = try await fixture.server()
            let double = try work(2 * requests)
            cpu = processCPUTime()
            let b = 2e6 / (try await microseconds(requests) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<2 {
                        group.addTask { for index in task * requests..<(task + 1) * requests { try await double(shared, index) } }
                    }
                    try await group.waitForAll()
                }
            })
            cpuTwo.append((processCPUTime() - cpu) / Double(2 * requests) * 1e6)
            one.append(a); two.append(b); ratios.append(b / a)
        }
        print(
            name.padding(toLength: 20, withPad: " ", startingAt: 0)
                + String(format: " %10.0f   %11.0f   %5.2f   %28.2f   %14.2f", median(one), median(two), median(ratios), median(cpuOne), median(cpuTwo))
        )
    }

    /// The CPU time this process has used, all threads together, in seconds.
    static func processCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Microseconds per request of `body`, which does `requests` of them.
    static func microseconds(_ requests: Int, _ body: () async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return SessionBenchmark.seconds(clock.now - start) / Double(requests) * 1e6
    }
}
