internal import Foundation
internal import OIDC
internal import Synchronization

/// Introspection answers by token digest, bounded, with one request in flight per token.
actor IntrospectionCache {
    private struct Entry: Sendable {
        var answer: TokenIntrospection
        var expiry: Date
    }

    private let settings: IntrospectionSettings
    private var entries: [String: Entry] = [:]
    /// Digests in the order they were cached, oldest first (from `oldest` on): what goes when full.
    private var order: [String] = []
    private var oldest = 0
    private var flights = SingleFlight<String, TokenIntrospection>()

    init(_ settings: IntrospectionSettings) {
        self.settings = settings
    }

    /// Entries held now (for tests).
    var count: Int { entries.count }

    /// The provider's answer about `token` at `now`, cached or asked.
    func answer(for token: String, now: Date) async throws(OIDCError) -> TokenIntrospection {
        let digest = Base64URLEncoding.encode(try LibCrypto.sha256(Array(token.utf8)))
        if let entry = entries[digest] {
            if entry.expiry > now { return entry.answer }
            entries[digest] = nil
        }
        let client = settings.client
        let task = flights.task(for: digest) ?? flights.launch(digest) { number in
            Task {
                defer { self.land(digest, number) }
                return try await client.introspect(Secret(token), hint: .accessToken)
            }
        }
        let answer = try await SingleFlight<String, TokenIntrospection>.value(
            of: task, cancelled: OIDCError(.cancelled, "The request was cancelled while the token was introspected."),
            failed: { OIDCError(.networkFailure, "The introspection failed: \($0).") }
        )
        store(answer, digest: digest, now: now)
        return answer
    }

    private func land(_ digest: String, _ number: Int) { flights.land(digest, number) }

    private func store(_ answer: TokenIntrospection, digest: String, now: Date) {
        let duration: TimeInterval
        if !answer.active {
            duration = settings.inactiveCacheDuration
        } else if let expiry = answer.expiresAt {
            duration = min(expiry.timeIntervalSince(now), settings.maximumCacheDuration)
        } else {
            duration = min(60, settings.maximumCacheDuration)
        }
        guard duration > 0, settings.cacheCapacity > 0 else { return }
        if entries[digest] == nil {
            makeRoom(now: now)
            order.append(digest)
        }
        entries[digest] = Entry(answer: answer, expiry: now.addingTimeInterval(duration))
    }

    /// Forgets the oldest entries until one more fits: expired or not, a forgotten answer only
    /// costs one more introspection.
    private func makeRoom(now: Date) {
        while entries.count >= settings.cacheCapacity, oldest < order.count {
            entries[order[oldest]] = nil
            oldest += 1
        }
        if oldest > 1_024, oldest * 2 > order.count {
            order.removeFirst(oldest)
            oldest = 0
        }
        // Digests whose entry expired and was dropped on lookup stay in `order` until their turn; the
        // table never outgrows the capacity, and `order` at most doubles it before it is compacted.
        if order.count - oldest > 2 * settings.cacheCapacity {
            order = order[oldest...].filter { entries[$0] != nil }
            oldest = 0
        }
    }
}
