package import Foundation
internal import Logging

/// A refresh of a login marked in flight in the stored login itself, for stores whose lock can be
/// lost (``TokenStore/lockCanBeLost``): written under the lock before the refresh token is sent,
/// removed by the save that ends the refresh (new tokens, or the old ones back after a transient
/// failure) or by the logout after a rejection.
///
/// An instance that takes the lock while another instance's refresh is marked and fresh knows
/// that the lock was lost while that refresh was at the provider: the stored refresh token may be
/// spent already, and its replacement is about to be saved. It waits for it instead of spending
/// the same token again (which a rotating provider answers with `invalid_grant`, and one that
/// detects reuse with the revocation of the whole login). See <doc:LostLocks>.
package struct RefreshMark: Equatable, Sendable {
    /// Random, one per refresh: tells a session its own marks from other instances'.
    package let id: String
    /// When the refresh began, by the clock of the instance that marked it.
    package let began: Date

    package init(id: String, began: Date) {
        self.id = id
        self.began = began
    }

    /// A new mark for a refresh beginning `now`.
    static func new(at now: Date) throws(OIDCError) -> RefreshMark {
        RefreshMark(id: try RandomToken.generate(byteCount: 16), began: now)
    }

    /// The mark as stored, `<id> <began, ms since 1970>`; `nil` when the text does not parse.
    package init?(encoded text: String) {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let milliseconds = Int64(parts[1]) else { return nil }
        self.init(id: String(parts[0]), began: Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000))
    }

    /// `<id> <began, ms since 1970>`.
    package var encoded: String { "\(id) \(Int64((began.timeIntervalSince1970 * 1000).rounded()))" }

    /// How much longer, at `now`, this mark counts as a refresh in flight, given that a refresh
    /// ends within `window` of its start: within `0...window`, so that a clock ahead of ours
    /// cannot make another instance wait longer than a refresh can take.
    func remaining(at now: Date, window: TimeInterval) -> TimeInterval {
        min(max(began.addingTimeInterval(window).timeIntervalSince(now), 0), window)
    }

    /// How long a refresh marked in flight may be under way, from the mark to the save of its
    /// tokens: three times the token client's timeout (the provider's answer, then a fetch and a
    /// refetch of the keys that verify a refreshed ID token) plus 60 s (the save, and a new lock
    /// when the first was lost, at the PostgreSQL store's default timeouts; and clocks of a fleet
    /// that disagree). 150 s with the default 30 s timeout.
    static func window(for client: TokenClient) -> TimeInterval {
        3 * client.requestOptions.timeout.timeInterval + 60
    }
}

/// What a session knows of refresh marks: its own latest ones (never waited for) and the other
/// instance's mark it found, with when it first saw it. A value, so its rules are testable alone.
struct RefreshMarkTracker {
    /// The ids of the latest refreshes this session marked in flight.
    private(set) var own: [String] = []
    /// Another instance's mark this session found, and when (by the session's clock) it first did:
    /// a mark counts for one window from then at most, whatever time it claims (a clock far ahead).
    private var foreignSeen: (id: String, at: Date)?

    /// Records a mark as this session's, before it is saved: a save that committed but reported a
    /// failure must not leave a mark this session waits for.
    mutating func recordOwn(_ mark: RefreshMark) { own = Array((own + [mark.id]).suffix(8)) }

    /// The mark of `login`, unless it is one of this session's.
    func foreign(in login: StoredLogin?) -> RefreshMark? {
        login?.refreshMark.flatMap { own.contains($0.id) ? nil : $0 }
    }

    /// How much longer `mark`, another instance's, counts as a refresh in flight at `now`: one
    /// window from the time it claims, and at most one window from when this tracker first saw it.
    mutating func remaining(of mark: RefreshMark, window: TimeInterval, now: Date) -> TimeInterval {
        if foreignSeen?.id != mark.id { foreignSeen = (mark.id, now) }
        let firstSeen = foreignSeen?.at ?? now
        return min(mark.remaining(at: now, window: window), max(firstSeen.addingTimeInterval(window).timeIntervalSince(now), 0))
    }
}

extension StoredLogin {
    /// This login with `mark` as its refresh in flight, or without one for `nil`.
    func marked(_ mark: RefreshMark?) -> StoredLogin {
        guard mark != refreshMark else { return self }
        var login = self
        login.refreshMark = mark
        return login
    }
}

extension AuthenticatedSession {
    /// What marking a refresh came to.
    enum MarkOutcome {
        /// Marked (or nothing to mark, for a store whose lock cannot be lost): refresh now.
        case marked(RefreshMark?)
        /// Another instance's refresh is marked in flight for this many more seconds at most.
        case inFlightElsewhere(TimeInterval)
    }

    /// Under the lock, before the refresh token of `stored` is sent: for a store whose lock can be
    /// lost, waits out another instance's fresh mark, or marks this refresh in flight (and the save
    /// of the mark is refused if the lock is lost already).
    func markRefresh(of stored: StoredLogin, foreignMark: RefreshMark?, client: TokenClient) async throws(OIDCError) -> MarkOutcome {
        guard store.lockCanBeLost else { return .marked(nil) }
        if var foreignMark {
            // Another instance's lock was lost while its refresh was at the provider: the stored
            // refresh token may be spent, its replacement on the way to the store.
            if foreignMark.began > now() {
                // Dated ahead of this clock: dated now instead, in the row, so that every session
                // counts its window from here (best effort; its owner's save replaces the row).
                foreignMark = RefreshMark(id: foreignMark.id, began: now())
                try? await storage { try await self.store.save(stored.marked(foreignMark), for: self.key) }
            }
            let remaining = marks.remaining(of: foreignMark, window: RefreshMark.window(for: client), now: now())
            if remaining > 0 { return .inFlightElsewhere(remaining) }
            logger.notice(
                "another instance's refresh of this login was marked in flight longer than a refresh takes; refreshing",
                metadata: lineMetadata())
        }
        let new = try RefreshMark.new(at: now())
        marks.recordOwn(new)
        do { try await storage { try await self.store.save(stored.marked(new), for: self.key) } } catch {
            // It may have been committed all the same (a connection that broke after the commit):
            // take it back, best effort, so that nobody waits for a refresh not sent.
            if unsaved == nil { await removeMark(from: stored) }
            throw error
        }
        // `stored` was the refreshed tokens the store had refused: saved now, with the mark.
        unsaved = nil
        return .marked(new)
    }

    /// Under the lock, after a refresh failed for a transient reason: puts `login` back without
    /// this refresh's mark, so that other instances do not wait for it; best effort (a mark left
    /// behind expires).
    func removeMark(from login: StoredLogin) async {
        do { try await storage { try await self.store.save(login, for: self.key) } } catch {
            logger.warning(
                "the failed refresh's in-flight mark could not be removed; other instances wait for it until it expires",
                metadata: lineMetadata(.failure(error)))
        }
    }
}
