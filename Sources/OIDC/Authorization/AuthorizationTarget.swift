public import Foundation

/// Where to send the browser for a login, and until when that works: what a ``FrontChannel`` makes
/// of an ``AuthorizationRequest`` (``RelyingParty/authorizationTarget(for:)``).
public struct AuthorizationTarget: Sendable, Hashable {
    /// The URL for the browser.
    public var url: URL
    /// When ``url`` stops working: a pushed request's URI expires, or a request object by value;
    /// `nil` for a plain URL, which works as long as the request does. Make a new target shortly
    /// before (``LoopbackLogin`` does, while nobody has opened its start URL).
    public var expiresAt: Date?

    /// A target of `url`, good until `expiresAt`.
    package init(url: URL, expiresAt: Date? = nil) {
        self.url = url
        self.expiresAt = expiresAt
    }
}
