// PostgresTokenStore against a local server: load and save latency, and what the store adds to a
// refresh (the lock, the re-read and the save), each as median and p99 over many runs.
//
//     scripts/postgres.sh run swift run -c release oidc-postgres-bench [--runs N]
//
// Reads the server from OIDC_TEST_DATABASE_URL (or DATABASE_URL); works in a table of its own,
// dropped at the end.
import Foundation
import Logging
import OIDC
import OIDCPostgres
import OIDCTesting
import PostgresNIO

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("oidc-postgres-bench: " + message + "\n").utf8))
    exit(1)
}

/// `--runs N` (2000 by default).
func parseRuns() -> Int {
    var runs = 2000
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--runs":
            guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 10 else { fail("--runs needs a number over 10") }
            runs = value
        default: fail("unknown argument \(argument); usage: oidc-postgres-bench [--runs N]")
        }
    }
    return runs
}
let runs = parseRuns()
let environment = ProcessInfo.processInfo.environment
guard let url = environment["OIDC_TEST_DATABASE_URL"] ?? environment["DATABASE_URL"] else {
    fail("set OIDC_TEST_DATABASE_URL or DATABASE_URL (scripts/postgres.sh run swift run -c release oidc-postgres-bench)")
}

/// Median and 99th percentile of `samples`, in milliseconds.
func summary(_ samples: [Duration]) -> (median: Double, p99: Double) {
    let sorted = samples.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000 }.sorted()
    return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)])
}

func measure(_ count: Int, _ operation: () async throws -> Void) async throws -> [Duration] {
    let clock = ContinuousClock()
    for _ in 0..<min(100, count / 10) { try await operation() }  // warm-up: connections, caches
    var samples: [Duration] = []
    samples.reserveCapacity(count)
    for _ in 0..<count { samples.append(try await clock.measure { try await operation() }) }
    return samples
}

func row(_ name: String, _ samples: [Duration]) {
    let (median, p99) = summary(samples)
    print(name.padding(toLength: 52, withPad: " ", startingAt: 0) + String(format: "%8.3f ms %10.3f ms %8d", median, p99, samples.count))
}

let configuration = {
    guard var configuration = try? PostgresConnectionURL.configuration(from: url) else { fail("the database URL is not a postgres:// URL") }
    configuration.options.maximumConnections = 4
    return configuration
}()
let client = PostgresClient(configuration: configuration)
let running = Task { await client.run() }

func benchmark(_ store: PostgresTokenStore, key: TokenStoreKey) async throws {
    try await withTestProvider { provider in
        try await withNIOHTTPTransport { transport in
            let tokens = try await provider.issueTokens()
            let login = try await store.inject(tokens, issuer: provider.issuer, clientID: TestProvider.Client.default.id, key: key)

            print("oidc-postgres-bench: PostgresTokenStore against \(configuration.host ?? "a socket"), \(runs) runs each")
            print("what".padding(toLength: 52, withPad: " ", startingAt: 0) + "  median        p99     runs")
            row("load (SELECT, open AES-256-GCM, decode)", try await measure(runs) { _ = try await store.load(key) })
            row("save (seal, INSERT … ON CONFLICT, commit)", try await measure(runs) { try await store.save(login, for: key) })
            row("withLock, empty body (lock, unlock)", try await measure(runs) { try await store.withLock(key) {} })
            let locked = try await measure(runs) {
                try await store.withLock(key) {
                    _ = try await store.load(key)
                    try await store.save(login, for: key)
                }
            }
            row("locked refresh path, store part (lock, load, save)", locked)

            // A whole refresh at TestProvider (HTTP, signing, rotation), once with an in-memory
            // store and once with this one: the difference is what PostgreSQL adds to a refresh.
            let metadata = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration()
            let tokenClient = TokenClient(provider: metadata, clientID: TestProvider.Client.default.id, transport: transport)
            let memory = InMemoryTokenStore()
            _ = try await memory.inject(tokens, issuer: provider.issuer, clientID: TestProvider.Client.default.id, key: key)
            // A login of its own for each store: each run rotates its refresh token.
            _ = try await store.inject(try await provider.issueTokens(), issuer: provider.issuer, clientID: TestProvider.Client.default.id, key: key)
            let refreshRuns = max(50, runs / 10)
            for (name, tokenStore) in [("whole refresh, InMemoryTokenStore", memory as any TokenStore), ("whole refresh, PostgresTokenStore", store)] {
                let session = AuthenticatedSession(
                    store: tokenStore, key: key, source: .refreshToken(tokenClient), transport: transport,
                    allowlist: .default(for: URL(string: provider.issuer)!))
                row(name, try await measure(refreshRuns) { _ = try await session.refreshNow() })
            }
        }
    }
}

let table = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
do {
    let encryption = try TokenEncryption(current: TokenEncryptionKey(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }))
    let store = try PostgresTokenStore(client: client, encryption: encryption, table: table)
    try await store.migrate()
    do {
        try await benchmark(store, key: TokenStoreKey(service: "bench", account: "user-1"))
    } catch {
        _ = try? await client.query("DROP TABLE IF EXISTS \(unescaped: table)")
        throw error
    }
    try await client.query("DROP TABLE IF EXISTS \(unescaped: table)")
} catch {
    fail("\(error)")
}
running.cancel()
