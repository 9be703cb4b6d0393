import Foundation
import OIDC
import OIDCTesting
import Synchronization
import Testing

/// A clock and a key server the tests control; counts fetches.
final class KeyServer: Sendable {
    private let state = Mutex<(now: Date, jwks: String, fetches: Int, failNext: Bool, failAlways: Bool)>((testNow, "", 0, false, false))

    var now: Date { state.withLock { $0.now } }
    var fetches: Int { state.withLock { $0.fetches } }
    func advance(_ seconds: TimeInterval) { state.withLock { $0.now += seconds } }
    func publish(_ jwks: String) { state.withLock { $0.jwks = jwks } }
    func failNextFetch() { state.withLock { $0.failNext = true } }
    func failAlways(_ fail: Bool) { state.withLock { $0.failAlways = fail } }

    func fetch() async throws -> [UInt8] {
        try await Task.sleep(for: .milliseconds(20))
        return try state.withLock { state in
            state.fetches += 1
            if state.failNext || state.failAlways {
                state.failNext = false
                throw OIDCError(.malformedResponse, "key server down")
            }
            return Array(state.jwks.utf8)
        }
    }

    func cache() -> JWKSCache {
        JWKSCache(now: { [self] in now }, fetch: { [self] in try await fetch() })
    }
}

@Suite("JWKS cache")
struct JWKSCacheTests {
    @Test("a fresh set is reused; an old one is fetched again")
    func maximumAge() async throws {
        let server = KeyServer()
        let key = try TestSigningKey.generate(.es256, keyID: "k1")
        server.publish(try key.jwksJSON)
        let cache = server.cache()
        _ = try await cache.keys()
        _ = try await cache.keys()
        server.advance(299)
        _ = try await cache.keys()
        #expect(server.fetches == 1)
        server.advance(2)
        _ = try await cache.keys()
        #expect(server.fetches == 2)
    }

    @Test("rotation: an unknown kid refetches only after the cool-down, then verifies")
    func rotation() async throws {
        let server = KeyServer()
        let old = try TestSigningKey.generate(.rs256, keyID: "old")
        let new = try TestSigningKey.generate(.rs256, keyID: "new")
        server.publish(try old.jwksJSON)
        let cache = server.cache()
        _ = try await verifier().verify(try old.sign(claims: standardClaims()), keys: cache, now: testNow)

        server.publish(try TestSigningKeyJSON.text(["keys": [try old.publicJWK(), try new.publicJWK()]]))
        server.advance(10)
        let rotated = try new.sign(claims: standardClaims())
        let error = await #expect(throws: OIDCError.self) { try await verifier().verify(rotated, keys: cache, now: testNow) }
        #expect((error)?.code == .keyNotFound)
        #expect(server.fetches == 1)

        server.advance(51)
        _ = try await verifier().verify(rotated, keys: cache, now: testNow)
        #expect(server.fetches == 2)
    }

    @Test("a flood of forged kids costs at most one fetch per cool-down")
    func flood() async throws {
        let server = KeyServer()
        let key = try TestSigningKey.generate(.es256, keyID: "real")
        server.publish(try key.jwksJSON)
        let cache = server.cache()
        _ = try await cache.keys()
        for i in 0..<200 {
            let forged = try TestSigningKey.generate(.es256, keyID: "forged-\(i)")
            _ = try? await verifier().verify(try forged.sign(claims: standardClaims()), keys: cache, now: testNow)
            if i == 100 { server.advance(61) }
        }
        #expect(server.fetches == 2)
    }

    @Test("concurrent callers share one fetch")
    func singleFlight() async throws {
        let server = KeyServer()
        server.publish(try TestSigningKey.generate(.es256, keyID: "k").jwksJSON)
        let cache = server.cache()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await cache.keys().keys.count } }
            for try await count in group { #expect(count == 1) }
        }
        #expect(server.fetches == 1)
    }

    @Test("a failed fetch is reported and the next call tries again")
    func failure() async throws {
        let server = KeyServer()
        server.publish(try TestSigningKey.generate(.es256, keyID: "k").jwksJSON)
        server.failNextFetch()
        let cache = server.cache()
        await #expect(throws: OIDCError.self) { try await cache.keys() }
        #expect(try await cache.keys().keys.count == 1)
        #expect(server.fetches == 2)
    }

    @Test("while the provider is down, the cached keys keep working and forged kids cost one fetch per cool-down")
    func outage() async throws {
        let server = KeyServer()
        let key = try TestSigningKey.generate(.es256, keyID: "k")
        server.publish(try key.jwksJSON)
        let cache = server.cache()
        _ = try await cache.keys()
        server.advance(400)  // older than the 300 s maximum age
        server.failAlways(true)
        let token = try key.sign(claims: standardClaims(["iss": testIssuer, "aud": "client-1", "exp": Int(server.now.timeIntervalSince1970) + 60, "iat": Int(server.now.timeIntervalSince1970)]))
        for _ in 0..<20 {
            _ = try await verifier().verify(token, keys: cache, now: server.now)  // stale keys, still the provider's
            let forged = try TestSigningKey.generate(.es256, keyID: "forged-\(Int.random(in: 0..<1_000_000))").sign(claims: standardClaims())
            await #expect(throws: (any Error).self) { try await verifier().verify(forged, keys: cache, now: server.now) }
        }
        #expect(server.fetches == 2)  // the first fetch, then one failed refetch in this cool-down
        server.advance(61)
        _ = try await cache.keys()
        #expect(server.fetches == 3)
        // A day without a successful fetch: the old keys are no longer trusted; the fetch's error shows.
        server.advance(86_400)
        await #expect(throws: OIDCError.self) { try await cache.keys() }
        server.failAlways(false)
        #expect(try await cache.keys().keys.count == 1)
    }

    @Test("an HMAC (oct) key in a provider's JWKS is skipped, never offered for HS256")
    func symmetricKeysSkipped() async throws {
        let server = KeyServer()
        let key = try TestSigningKey.generate(.es256, keyID: "k")
        var document = try #require(try JSONSerialization.jsonObject(with: Data(try key.jwksJSON.utf8)) as? [String: [[String: Any]]])
        document["keys"]?.insert(["kty": "oct", "kid": "h", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"], at: 0)
        server.publish(String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self))
        let keys = try await server.cache().keys()
        #expect(keys.keys.count == 1)
        #expect(keys.keys.allSatisfy { $0.keyType != "oct" })
        #expect(keys.skipped.contains { $0.contains("oct") })
        // A local JWKS file may still hold one, for HS* tests.
        let local = try JWKSet(json: Array(#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#.utf8))
        #expect(local.keys.count == 1)
    }
}
