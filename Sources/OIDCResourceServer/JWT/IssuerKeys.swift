internal import Foundation
internal import OIDC
internal import Synchronization

/// One trusted issuer's keys with a snapshot in front of its `JWKSCache`: the cache is an actor,
/// and asking it on every request would make every verification of the process queue on it. The
/// snapshot is taken from the cache at most once a second (so the cache's own ages, refetches and
/// outage rules still decide), and read under a lock held only to copy a reference.
final class IssuerKeys: Sendable {
    let issuer: String
    let cache: JWKSCache
    private let snapshot = Mutex<(keys: JWKSet, takenAt: Date)?>(nil)
    static let snapshotAge: TimeInterval = 1

    init(_ trusted: TrustedIssuer) {
        issuer = trusted.issuer
        cache = trusted.keys
    }

    /// The issuer's current keys.
    func keys(now: Date) async throws(OIDCError) -> JWKSet {
        if let taken = snapshot.withLock({ $0 }), now.timeIntervalSince(taken.takenAt) < Self.snapshotAge, now >= taken.takenAt {
            return taken.keys
        }
        let keys = try await cache.keys()
        snapshot.withLock { $0 = (keys, now) }
        return keys
    }

    /// Fresher keys after a token named a key the set lacks; `nil` while the cache's cool-down runs.
    func refetch(now: Date) async throws(OIDCError) -> JWKSet? {
        guard let keys = try await cache.refetchAfterUnknownKey() else { return nil }
        snapshot.withLock { $0 = (keys, now) }
        return keys
    }
}
