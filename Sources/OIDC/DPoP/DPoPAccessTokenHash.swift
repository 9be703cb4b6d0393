internal import Synchronization

/// A proof's `ath` (RFC 9449 §4.2: base64url SHA-256 of the access token's ASCII), kept for the
/// last token a key signed for: a session sends one token with many requests, and hashing an
/// 800-byte token was the largest part of a proof's cost beyond its signature (`oidc-bench
/// --profile-dpop`). The token held here is one the key's login already holds; copies of a
/// ``DPoPKey`` share it; never printed.
final class DPoPAccessTokenHash: Sendable {
    // The token as a `Secret`: a key printed, reflected or dumped never shows it.
    private let last = Mutex<(token: Secret, hash: String)?>(nil)

    /// `ath` for `token`: the kept one when `token` is the last one asked for, else a new hash.
    func hash(of token: String) throws(OIDCError) -> String {
        if let hash = last.withLock({ $0?.token.revealedValue == token ? $0?.hash : nil }) { return hash }
        let hash = Base64URLEncoding.encode(try LibCrypto.sha256(Array(token.utf8)))
        last.withLock { $0 = (Secret(token), hash) }
        return hash
    }
}
