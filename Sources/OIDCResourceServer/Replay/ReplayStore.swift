public import Foundation

/// Where a resource server remembers the one-time identifiers it has accepted, so that the same
/// DPoP proof (`jti`, RFC 9449 §11.1) or logout token (`jti`, OIDC Back-Channel Logout 1.0 §2.6)
/// is refused the second time it arrives.
///
/// ``InMemoryReplayStore`` serves one process. A fleet of instances behind a load balancer needs
/// one store they all share, such as `PostgresReplayStore` in `OIDCPostgres`: otherwise a proof
/// replayed at another instance is accepted there.
///
/// Write your own (Redis, memcached) by implementing ``claim(_:until:)`` (and
/// ``claim(_:until:now:)``, to compare expiries with the caller's clock); it must be atomic across
/// every instance that shares the store. Delete a record only well after its expiry (a few
/// minutes, at least the largest difference between the instances' clocks): an instance whose
/// clock runs ahead must not forget an identifier another instance would still accept.
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

    /// Records `identifier` as used until `expiry`, and says whether this was its first use, with
    /// `now` the caller's clock, by which it judged the identifier's age: a record whose expiry is
    /// not after `now` counts as gone. ``ResourceServer`` and ``LogoutTokenVerifier`` call this one
    /// with their own clock, so that a store and its caller never disagree on what has expired.
    ///
    /// The default calls ``claim(_:until:)``: the store's own clock decides.
    ///
    /// - Returns: as ``claim(_:until:)``.
    /// - Throws: ``ReplayStoreError`` when the store cannot answer.
    func claim(_ identifier: String, until expiry: Date, now: Date) async throws -> Bool

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

    public func claim(_ identifier: String, until expiry: Date, now: Date) async throws -> Bool {
        try await claim(identifier, until: expiry)
    }
}

/// A replay store could not answer: the request that needed it is refused, never let through.
public struct ReplayStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the store could not answer.
    public enum Reason: Sendable, Equatable {
        /// The in-memory store holds its maximum of identifiers; older ones expire soon.
        case full(capacity: Int)
        /// The in-memory store holds its maximum of identifiers for one DPoP proof key (one
        /// client): that key's next proofs are refused until its older ones expire, while other
        /// keys' proofs are still taken.
        case keyQuota(perKey: Int)
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
            "The replay store holds its maximum of \(capacity) identifiers; "
                + "raise its capacity or shorten the accepted age of proofs."
        case .keyQuota(let perKey):
            "The replay store holds its maximum of \(perKey) identifiers for one proof key; "
                + "that client sends proofs faster than the store's per-key quota allows (raise it if that is expected)."
        case .unavailable(let why):
            "The replay store could not be reached (\(why)); the request was refused."
        }
    }
}
