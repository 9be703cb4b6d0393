public import Foundation
import Synchronization

/// A ``ReplayStore`` for one process: a bounded table in memory.
///
/// Identifiers are kept until their expiry, then for ``purgeMargin`` more, and then forgotten: a
/// caller whose clock runs up to the margin behind another caller's (or a system clock stepped
/// back that far) still finds the record and refuses the replay. Claims compare expiries with the
/// caller's clock (``claim(_:until:now:)``; ``ResourceServer`` and ``LogoutTokenVerifier`` pass
/// theirs), or with the store's own (``claim(_:until:)``).
///
/// **Bounded.** The table never holds more than ``capacity`` identifiers, nor more than
/// ``perKeyLimit`` for one DPoP proof key (identifiers of the form ``DPoPProof/replayIdentifier``):
/// one client that sends proofs as fast as it can fills its own quota, not the table, so the other
/// clients' proofs are still taken. When the table or a key's quota is full of identifiers that
/// have not expired, a new claim throws ``ReplayStoreError/Reason/full(capacity:)`` or
/// ``ReplayStoreError/Reason/keyQuota(perKey:)`` and the request is refused, since forgetting a
/// live identifier early would let its replay through. Under that pressure, identifiers that have
/// expired but are still within their margin are forgotten first (at the next sweep, at most one
/// a second).
///
/// Instances behind a load balancer each see only their own traffic; give them a shared store.
public final class InMemoryReplayStore: ReplayStore {
    private struct Table {
        var expiries: [String: Date] = [:]
        /// How many identifiers each proof key holds (keys with none are absent).
        var perKey: [Substring: Int] = [:]
        var nextSweep: Date = .distantPast

        /// Keeps the identifiers whose expiry is after `cutoff`, and counts them again per key.
        mutating func keep(after cutoff: Date) {
            expiries = expiries.filter { $0.value > cutoff }
            perKey = [:]
            for identifier in expiries.keys {
                if let key = DPoPProof.keyThumbprint(ofReplayIdentifier: identifier) { perKey[key, default: 0] += 1 }
            }
        }
    }

    /// The most identifiers held at once.
    public let capacity: Int
    /// The most identifiers held at once for one DPoP proof key (one client's key).
    public let perKeyLimit: Int
    /// How long an identifier is kept after its expiry, in seconds, unless the table or its key's
    /// quota is full.
    public let purgeMargin: TimeInterval
    private let now: @Sendable () -> Date
    private let table = Mutex(Table())

    /// A store holding at most `capacity` identifiers, and `perKeyLimit` of one proof key.
    ///
    /// - Parameters:
    ///   - capacity: The most identifiers held at once (100 000 by default: about 10 MB).
    ///   - perKeyLimit: The most held for one DPoP proof key (10 000 by default: with proofs
    ///     remembered 70 s, a client may send about 140 proofs a second, and one client never
    ///     takes more than a tenth of the default capacity).
    ///   - purgeMargin: How long an identifier is kept after its expiry, in seconds (60 by
    ///     default): the clock difference between callers (or the clock step back) that cannot let
    ///     a replay through.
    ///   - now: The clock ``claim(_:until:)`` compares expiries with; the system's by default, a
    ///     test's own in tests. ``claim(_:until:now:)`` uses the caller's instead.
    public init(
        capacity: Int = 100_000, perKeyLimit: Int = 10_000, purgeMargin: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        precondition(capacity > 0, "An InMemoryReplayStore needs a capacity of at least 1.")
        precondition(perKeyLimit > 0, "An InMemoryReplayStore needs a per-key limit of at least 1.")
        precondition(purgeMargin.isFinite && purgeMargin >= 0, "An InMemoryReplayStore's purge margin must be finite and not negative.")
        self.capacity = capacity
        self.perKeyLimit = perKeyLimit
        self.purgeMargin = purgeMargin
        self.now = now
    }

    /// The number of identifiers currently held, expired or not.
    public var count: Int { table.withLock { $0.expiries.count } }

    /// The number of identifiers currently held for the DPoP proof key `thumbprint`, expired or not.
    public func count(forKey thumbprint: String) -> Int { table.withLock { $0.perKey[Substring(thumbprint)] ?? 0 } }

    public func claim(_ identifier: String, until expiry: Date) async throws -> Bool {
        try claim(identifier, until: expiry, at: now())
    }

    public func claim(_ identifier: String, until expiry: Date, now: Date) async throws -> Bool {
        try claim(identifier, until: expiry, at: now)
    }

    private func claim(_ identifier: String, until expiry: Date, at now: Date) throws -> Bool {
        let key = DPoPProof.keyThumbprint(ofReplayIdentifier: identifier)
        return try table.withLock { table in
            if let held = table.expiries[identifier] {
                guard held <= now else { return false }
                // Expired by the caller's clock: claimed again in its place (same key, same count).
                table.expiries[identifier] = expiry
                return true
            }
            let keyFull = key.map { (table.perKey[$0] ?? 0) >= perKeyLimit } ?? false
            if now >= table.nextSweep {
                table.keep(after: now.addingTimeInterval(-purgeMargin))
                // Under pressure, the identifiers within their margin go too: never a live one.
                if table.expiries.count >= capacity || keyFull { table.keep(after: now) }
                // A sweep costs a pass over the table under the lock: at most once a second, also
                // when the table is full (a flood of claims then costs one pass a second, not one
                // each).
                table.nextSweep = now.addingTimeInterval(1)
            }
            guard table.expiries.count < capacity else { throw ReplayStoreError(.full(capacity: capacity)) }
            if let key {
                guard (table.perKey[key] ?? 0) < perKeyLimit else { throw ReplayStoreError(.keyQuota(perKey: perKeyLimit)) }
                table.perKey[key, default: 0] += 1
            }
            table.expiries[identifier] = expiry
            return true
        }
    }

    public func release(_ identifier: String) async throws {
        table.withLock { table in
            guard table.expiries.removeValue(forKey: identifier) != nil, let key = DPoPProof.keyThumbprint(ofReplayIdentifier: identifier) else { return }
            let remaining = (table.perKey[key] ?? 1) - 1
            table.perKey[key] = remaining > 0 ? remaining : nil
        }
    }
}
