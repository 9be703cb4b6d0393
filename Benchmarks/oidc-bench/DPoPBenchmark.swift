import COpenSSL
import Foundation
import OIDC
import OIDCTesting

/// DPoP's costs: a whole proof (`DPoPKey.proof`: random jti, claims JSON, ath hash, base64url,
/// ES256 signature) beside a bare OpenSSL ES256 signature over an input of the same size with the
/// same key; then an authenticated session's request with a DPoP-bound token beside one with a
/// bearer token, on loopback against the test provider (which checks every proof).
enum DPoPBenchmark {
    /// The baseline: EVP_DigestSign with the same P-256 key, a fresh EVP_MD_CTX per signature, as a C program would.
    final class BareSigner {
        let key: OpaquePointer
        let digest: OpaquePointer?
        var signature = [UInt8](repeating: 0, count: 80)

        init(pem: String) throws {
            let bio = pem.withCString { BIO_new_mem_buf($0, Int32(strlen($0))) }
            defer { BIO_free(bio) }
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw OIDCError(.cryptoFailure, "PEM_read_bio_PrivateKey failed") }
            self.key = key
            digest = EVP_MD_fetch(nil, "SHA256", nil)
        }

        func sign(_ message: [UInt8]) -> Bool {
            let context = EVP_MD_CTX_new()
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, digest, nil, key) == 1 else { return false }
            var length = signature.count
            return EVP_DigestSign(context, &signature, &length, message, message.count) == 1
        }
    }

    static func run(rounds: Int, seconds: Double, requests: Int) async throws {
        let key = try DPoPKey.generate(.es256)
        let url = URL(string: "https://api.example.com/v1/accounts?limit=10")!
        let token = Secret(String(repeating: "a", count: 800))
        let sample = try key.proof(method: "GET", url: url, accessToken: token, nonce: "eyJ7S_zG.eyJH0-Z.HX4w-7v")
        let input = Array(sample.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        let bare = try BareSigner(pem: try key.privateKeyPEM())
        guard bare.sign(input) else { fatalError("bare signature failed") }
        var proofs: [Double] = [], signatures: [Double] = [], ratios: [Double] = []
        for _ in 0..<rounds {
            let p = rate(seconds: seconds) { (try? key.proof(method: "GET", url: url, accessToken: token, nonce: "eyJ7S_zG.eyJH0-Z.HX4w-7v")) != nil }
            let s = rate(seconds: seconds) { bare.sign(input) }
            proofs.append(1e6 / p); signatures.append(1e6 / s); ratios.append(s / p)
        }
        print("DPoP proof (ES256, with ath and nonce) vs bare OpenSSL ES256 signature of the same input, \(rounds) interleaved rounds of \(seconds) s, medians")
        print(String(format: "DPoP proof       %8.2f µs", median(proofs)))
        print(String(format: "bare ES256 sign  %8.2f µs", median(signatures)))
        print(String(format: "proof/signature  %8.3f ×  (goal ≤ 1.3)", median(ratios)))
        try await sessions(rounds: rounds, requests: requests)
    }

    /// `count` proofs (or, with `bare`, `count` bare signatures of a proof's input) and nothing else,
    /// for `valgrind --tool=callgrind`: the difference of two counts' totals is the cost of one.
    static func profile(count: Int, bare: Bool) throws {
        let key = try DPoPKey.generate(.es256)
        let url = URL(string: "https://api.example.com/v1/accounts?limit=10")!
        let token = Secret(String(repeating: "a", count: 800))
        let nonce = "eyJ7S_zG.eyJH0-Z.HX4w-7v"
        let sample = try key.proof(method: "GET", url: url, accessToken: token, nonce: nonce)
        let input = Array(sample.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        let signer = try BareSigner(pem: try key.privateKeyPEM())
        for _ in 0..<count {
            if bare {
                guard signer.sign(input) else { fatalError("bare signature failed") }
            } else {
                _ = try key.proof(method: "GET", url: url, accessToken: token, nonce: nonce)
            }
        }
    }

    /// Two sessions over the same provider: one bearer login, one DPoP-bound login; the same GET /api/me.
    static func sessions(rounds: Int, requests: Int) async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let store = InMemoryTokenStore()
                let configuration = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration()
                func session(_ account: String) -> AuthenticatedSession {
                    AuthenticatedSession(
                        store: store, key: TokenStoreKey(service: "oidc", account: account),
                        source: .refreshToken(TokenClient(provider: configuration, clientID: "test-client", transport: transport)),
                        transport: transport, allowlist: .default(for: URL(string: provider.issuer)!)
                    )
                }
                _ = try await provider.logIn(into: store, key: TokenStoreKey(service: "oidc", account: "bearer"))
                let key = try DPoPKey.generate(.es256)
                var bound = StoredLogin(
                    tokens: try await provider.issueTokens(dpopKeyThumbprint: key.thumbprint), issuer: provider.issuer, clientID: "test-client",
                    provider: configuration)
                bound.dpopKey = key
                await store.save(bound, for: TokenStoreKey(service: "oidc", account: "dpop"))
                let bearerSession = session("bearer"), dpopSession = session("dpop")
                let request = HTTPRequest(url: URL(string: provider.protectedResourceURL)!)
                for _ in 0..<200 {
                    guard try await bearerSession.send(request).status == 200, try await dpopSession.send(request).status == 200 else {
                        fatalError("warm-up request refused")
                    }
                }
                var bearerTimes: [Double] = [], dpopTimes: [Double] = []
                let clock = ContinuousClock()
                for _ in 0..<rounds {
                    var start = clock.now
                    for _ in 0..<requests { guard try await bearerSession.send(request).status == 200 else { fatalError("bearer request failed") } }
                    bearerTimes.append(SessionBenchmark.seconds(clock.now - start) / Double(requests) * 1e6)
                    start = clock.now
                    for _ in 0..<requests { guard try await dpopSession.send(request).status == 200 else { fatalError("DPoP request failed") } }
                    dpopTimes.append(SessionBenchmark.seconds(clock.now - start) / Double(requests) * 1e6)
                }
                let b = median(bearerTimes), d = median(dpopTimes)
                print("Session request, DPoP-bound vs bearer token, GET /api/me on loopback (the provider verifies each proof), \(rounds) rounds of \(requests), medians")
                print(String(format: "bearer session   %8.1f µs/request", b))
                print(String(format: "DPoP session     %8.1f µs/request", d))
                print(String(format: "DPoP overhead    %8.1f µs/request  (%.1f%%; client proof and server check together)", d - b, (d - b) / b * 100))
                #if DEBUG
                print("note: a debug build; use swift run -c release oidc-bench --dpop")
                #endif
            }
        }
    }
}
