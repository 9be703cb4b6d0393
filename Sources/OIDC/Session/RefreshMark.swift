import Foundation

/// A refresh of a login marked in flight in the stored login itself, for stores whose lock can be
/// lost (``TokenStore/lockCanBeLost``): written under the lock before the refresh token is sent,
/// removed by the save that ends the refresh (new tokens, or the old ones back after a transient
/// failure) or by the logout after a rejection.
///
/// An instance that takes the lock while another instance's refresh is marked and fresh knows
/// that the lock was lost while that refresh was at the provider: the stored refresh token may be
/// spent already, and its replacement is about to be saved. It waits for it instead of spending
/// the same token again (which a rotating provider answers with `invalid_grant`, and one that
/// detects reuse with the revocation of the whole login).
struct RefreshMark: Equatable, Sendable {
    /// The stored login's attribute that holds the mark: `<id> <began, ms since 1970>`.
    static let attribute = "oidc.refresh-in-flight"

    /// Random, one per refresh: tells a session its own marks from other instances'.
    let id: String
    /// When the refresh began, by the clock of the instance that marked it.
    let began: Date

    init(id: String, began: Date) {
        self.id = id
        self.began = began
    }

    /// A new mark for a refresh beginning `now`.
    static func new(at now: Date) throws(OIDCError) -> RefreshMark {
        RefreshMark(id: try RandomToken.generate(byteCount: 16), began: now)
    }

    /// The mark kept in `login`, if any; an attribute that does not parse is no mark.
    init?(in login: StoredLogin) {
        guard let text = login.attributes[Self.attribute] else { return nil }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let milliseconds = Int64(parts[1]) else { return nil }
        self.init(id: String(parts[0]), began: Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000))
    }

    var encoded: String { "\(id) \(Int64((began.timeIntervalSince1970 * 1000).rounded()))" }

    /// How much longer, at `now`, this mark counts as a refresh in flight, given that a refresh
    /// ends within `window` of its start: within `0...window`, so that a clock ahead of ours
    /// cannot make another instance wait longer than a refresh can take.
    func remaining(at now: Date, window: TimeInterval) -> TimeInterval {
        min(max(began.addingTimeInterval(window).timeIntervalSince(now), 0), window)
    }
}

extension StoredLogin {
    /// The refresh marked in flight in this login, if any.
    var refreshMark: RefreshMark? { RefreshMark(in: self) }

    /// This login with `mark` as its refresh in flight, or without one for `nil`.
    func marked(_ mark: RefreshMark?) -> StoredLogin {
        // Most logins carry no mark: nothing to copy then.
        guard mark != nil || attributes[RefreshMark.attribute] != nil else { return self }
        var login = self
        login.attributes[RefreshMark.attribute] = mark?.encoded
        return login
    }
}
