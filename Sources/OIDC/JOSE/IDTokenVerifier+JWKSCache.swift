public import Foundation
internal import Logging

extension IDTokenVerifier {
    /// Verifies `token` with keys from `cache`, refetching once (within the cache's limits) when the
    /// token names a key the cached set does not have.
    ///
    /// The cache's ``JWKSCache/logger`` gets the outcome: the key id and algorithm at `trace`, the
    /// failure's code at `debug`.
    ///
    /// - Throws: what ``verify(_:keys:now:)`` throws, and what ``JWKSCache/keys()`` throws.
    public func verify(_ token: String, keys cache: JWKSCache, now: Date = Date()) async throws(OIDCError) -> IDToken {
        let verified: IDToken
        do {
            verified = try await cache.verifyRefetchingOnce("ID token") { keys throws(OIDCError) in try verify(token, keys: keys, now: now) }
        } catch {
            cache.logger.debug("ID token rejected", metadata: .failure(error))
            throw error
        }
        cache.logger.trace(
            "ID token verified",
            metadata: ["kid": .untrusted(verified.keyID ?? "none"), "alg": .string(verified.algorithm.rawValue), "issuer": .issuer(issuer)]
        )
        return verified
    }
}
