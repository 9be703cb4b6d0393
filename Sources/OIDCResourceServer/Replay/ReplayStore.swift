public import Foundation

/// Where a resource server remembers the one-time identifiers it has accepted, so that the same
/// DPoP proof (`jti`, RFC 9449 §11.1) or logout token (`jti`, OIDC Back-Channel Logout 1.0 §2.6)
/// is refused the second time it arrives.
///
/// ``InMemoryReplayStore`` serves one process. A fleet of instances behind a load balancer needs
/// one store they all share, such as `PostgresReplayStore` in `OIDCPostgres`: otherwise a proof
/// replayed at another instance is accepted there.
///
/// Write your own (Redis, memcached) by implementing ``claim(_:until:)``; it must be atomic across
/// every instance that shares the store.
public protocol ReplayStore: Sendable {
    /// Records `identifier` as used until `expiry`, and says whether this was its first use.
    ///
    /// - Parameters:
    ///   - identifier: What to remember, already scoped by the caller (for example the proof key's
    ///     thumbprint and the proof's `jti`). It may be long or contain any character; a store
    ///     that needs a fixed size hashes it.
    ///   - expiry: When the identifier can be forgotten: after it, whatever carried it is refused
    ///     for its age anyway.
    /// - Returns: `true` when `identifier` was not recorded (or its record had expired) and is now
    ///   recorded; `false` when it was already recorded: a replay.
    /// - Throws: ``ReplayStoreError`` when the store cannot answer. The caller refuses the request
    ///   then: a replay store that fails never lets a replay through.
    func claim(_ identifier: String, until expiry: Date) async throws -> Bool

    /// Forgets `identifier`, claimed by this caller, so that it can be claimed again: for work
    /// that failed after its claim (a back-channel logout whose logins could not be deleted, so
    /// that the provider's retry of the same token is not refused as a replay).
    ///
    /// The default does nothing: the identifier stays claimed until its expiry, and the retry is
    /// refused. ``InMemoryReplayStore`` and `PostgresReplayStore` forget it.
    func release(_ identifier: String) async throws
}

extension ReplayStore {
    public func release(_ identifier: String) async throws {}
}

/// A replay store could not answer: the request that needed it is refused, never let through.
public struct ReplayStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the store could not answer.
    public enum Reason: Sendable, Equatable {
        /// The in-memory store holds its maximum of live identifiers; older ones expire soon.
        case full(capacity: Int)
        /// The shared store (a database) failed or could not be reached.
        case unavailable(String)
    }

    /// Why the store could not answer.
    public var reason: Reason

    /// An error for `reason`.
    public init(_ reason: Reason) { self.reason = reason }

    /// Why the store could not answer, and what to do about it.
    public var description: String {
        switch reason {
        case .full(let capacity):
            "The replay store holds its maximum of \(capacity) live identifiers; "
                + "raise its capacity or shorten the accepted age of proofs."
        case .unavailable(let why):
            "The replay store could not be reached (\(why)); the request was refused."
        }
    }
}
