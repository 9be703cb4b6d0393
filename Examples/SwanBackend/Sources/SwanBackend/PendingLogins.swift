import Foundation
import OIDC

/// Logins started by `/auth` and not yet back at `/auth/callback`, by browser: the cookie that
/// `/auth` sets names the entry, so a callback is only accepted in the browser that started it.
actor PendingLogins {
    private struct Entry {
        var request: AuthorizationRequest
        var started: Date
    }

    /// A login not finished within this time is forgotten (the provider's page has long expired).
    static let lifetime: TimeInterval = 600
    /// At most this many logins wait at once; the oldest is dropped, so nobody can fill the memory.
    static let capacity = 10_000

    private var entries: [String: Entry] = [:]

    func add(_ request: AuthorizationRequest, for browser: String, now: Date = Date()) {
        entries = entries.filter { now.timeIntervalSince($0.value.started) < Self.lifetime }
        if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.started < $1.value.started }) {
            entries[oldest.key] = nil
        }
        entries[browser] = Entry(request: request, started: now)
    }

    /// The browser's pending login, removed: a callback is used once, whatever its outcome.
    func take(for browser: String, now: Date = Date()) -> AuthorizationRequest? {
        guard let entry = entries.removeValue(forKey: browser), now.timeIntervalSince(entry.started) < Self.lifetime else {
            return nil
        }
        return entry.request
    }
}
