public import Foundation
internal import Logging

extension JARMVerifier {
    /// Verifies `response` with keys from `cache`, refetching once (within the cache's limits) when
    /// it names a key the cached set does not have, as ``IDTokenVerifier`` does with ID tokens.
    ///
    /// - Throws: what the verification with a ``JWKSet`` throws, and what ``JWKSCache/keys()`` throws.
    public func verify(_ response: String, keys cache: JWKSCache, now: Date = Date()) async throws(OIDCError) -> [String: String] {
        do {
            let parameters = try await cache.verifyRefetchingOnce("authorization response") { keys throws(OIDCError) in
                try verify(response, keys: keys, now: now)
            }
            cache.logger.trace("authorization response (JARM) verified", metadata: ["issuer": .issuer(issuer)])
            return parameters
        } catch {
            cache.logger.debug("authorization response (JARM) rejected", metadata: .failure(error))
            throw error
        }
    }
}

extension JWKSCache {
    /// `verify` with the cached keys, then once more with a fresh set (within the cache's limits)
    /// when it fails with ``OIDCError/Code/keyNotFound``: the provider rotated its keys.
    package nonisolated func verifyRefetchingOnce<T: Sendable>(
        _ what: String, _ verify: @Sendable (JWKSet) throws(OIDCError) -> T
    ) async throws(OIDCError) -> T {
        let keys = try await keys()
        do {
            return try verify(keys)
        } catch where error.code == .keyNotFound {
            logger.debug("\(what) names a key the cached JWKS lacks")
            guard let fresher = try await refetchAfterUnknownKey() else { throw error }
            return try verify(fresher)
        }
    }
}
