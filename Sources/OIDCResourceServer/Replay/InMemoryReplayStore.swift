public import Foundation
import Synchronization

/// A ``ReplayStore`` for one process: a bounded table in memory.
///
/// Identifiers are kept until their expiry and then forgotten. The table never holds more than
/// `capacity` live identifiers: when it is full of identifiers that have not expired, a new claim
/// throws ``ReplayStoreError/Reason/full(capacity:)`` and the request is refused, since forgetting
/// a live identifier early would let its replay through.
///
/// Instances behind a load balancer each see only their own traffic; give them a shared store.
public final class InMemoryReplayStore: ReplayStore {
    private struct Table {
        var expiries: [String: Date] = [:]
        var nextSweep: Date = .distantPast
    }

    /// The most live identifiers held at once.
    public let capacity: Int
    private let now: @Sendable () -> Date
    private let table = Mutex(Table())

    /// A store holding at most `capacity` live identifiers.
    ///
    /// - Parameters:
    ///   - capacity: The most identifiers held at once (100 000 by default: about 10 MB).
    ///   - now: The clock expiries are compared with; the system's by default, a test's own in tests.
    public init(capacity: Int = 100_000, now: @escaping @Sendable () -> Date = { Date() }) {
        precondition(capacity > 0, "An InMemoryReplayStore needs a capacity of at least 1.")
        self.capacity = capacity
        self.now = now
    }

    /// The number of identifiers currently held, expired or not.
    public var count: Int { table.withLock { $0.expiries.count } }

    public func claim(_ identifier: String, until expiry: Date) async throws -> Bool {
        let now = now()
        return try table.withLock { table in
            if let held = table.expiries[identifier], held > now { return false }
            if now >= table.nextSweep {
                table.expiries = table.expiries.filter { $0.value > now }
                // A sweep costs a pass over the table under the lock: at most once a second, also
                // when the table is full (a flood of claims then costs one pass a second, not one
                // each).
                table.nextSweep = now.addingTimeInterval(1)
            }
            guard table.expiries.count < capacity else { throw ReplayStoreError(.full(capacity: capacity)) }
            table.expiries[identifier] = expiry
            return true
        }
    }

    public func release(_ identifier: String) async throws {
        _ = table.withLock { $0.expiries.removeValue(forKey: identifier) }
    }
}
