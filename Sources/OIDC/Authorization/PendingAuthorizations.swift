public import Foundation

/// A server's logins in progress, by a random id that binds each to the browser that started it
/// (put it in an `HttpOnly`, `SameSite=Lax` cookie): the ``AuthorizationRequest`` with its state,
/// nonce and PKCE verifier stays on the server, single use, for ``lifetime`` at most.
///
/// ```swift
/// let pending = PendingAuthorizations()
/// // GET /login
/// let request = try rp.authorizationRequest(redirectURI: callbackURI)
/// let id = try await pending.begin(request)          // → Set-Cookie: login=<id>; HttpOnly; SameSite=Lax
/// // GET /callback
/// guard let request = await pending.end(cookie, callback: callbackURL) else { /* 400: start again */ }
/// let login = try await rp.completeLogin(callback: callbackURL, for: request)
/// ```
///
/// A callback whose `state` is not the request's does not end the login
/// (``end(_:callback:)``): a cross-site navigation to the callback with the victim's cookie cannot
/// throw away the login the victim is in the middle of. At ``capacity``, expired logins go first,
/// then the oldest.
public actor PendingAuthorizations {
    /// How long a login may be in progress.
    public nonisolated let lifetime: Duration
    /// How many logins may be in progress at once.
    public nonisolated let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private var entries: [String: (request: AuthorizationRequest, expires: ContinuousClock.Instant)] = [:]
    /// Ids in the order they began (the order they expire in); ids already ended are skipped.
    private var order: [String] = []
    private var head = 0

    /// An empty set of logins in progress.
    ///
    /// - Parameters:
    ///   - lifetime: how long a login may take, 10 minutes by default (at least 1 s).
    ///   - capacity: how many may be in progress at once, 10 000 by default (at least 1).
    public init(lifetime: Duration = .seconds(600), capacity: Int = 10_000) {
        self.init(lifetime: lifetime, capacity: capacity, now: { ContinuousClock.now })
    }

    init(lifetime: Duration, capacity: Int, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.lifetime = max(lifetime, .seconds(1))
        self.capacity = max(capacity, 1)
        self.now = now
    }

    /// How many logins are in progress (expired ones not counted).
    public var count: Int {
        let now = now()
        return entries.values.filter { $0.expires > now }.count
    }

    /// Keeps `request` and returns its id: 256 random bits, base64url, for the browser's cookie.
    ///
    /// - Throws: ``OIDCError/Code/randomFailure`` when the random generator fails.
    public func begin(_ request: AuthorizationRequest) throws(OIDCError) -> String {
        let id = try RandomToken.generate()
        removeExpired()
        while entries.count >= capacity, let oldest = nextInOrder() { entries[oldest] = nil }
        entries[id] = (request, now() + lifetime)
        order.append(id)
        return id
    }

    /// The request kept under `id`, removed: single use. `nil` when there is none, or it expired.
    ///
    /// For a callback, prefer ``end(_:callback:)``: this one drops the login whatever the request
    /// carries, so a forged callback with the browser's id (and a wrong `state`) ends the user's
    /// login in progress. Use this one to cancel a login (the user went back, a timeout of yours).
    public func end(_ id: String) -> AuthorizationRequest? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        return entry.expires > now() ? entry.request : nil
    }

    /// The request kept under `id`, removed, if `callback` carries its `state` (exactly once,
    /// compared in constant time); otherwise `nil`, and the login stays in progress.
    ///
    /// For a request that asked for a signed response (JARM), whose callback has the state only
    /// inside its `response` JWT, that state is read here without verification: like a plain
    /// state, it only decides which login the callback may end; ``RelyingParty/completeLogin(callback:for:now:)``
    /// then verifies the response before anything in it is used.
    public func end(_ id: String, callback: URL) -> AuthorizationRequest? {
        guard let entry = entries[id], entry.expires > now() else {
            entries[id] = nil
            return nil
        }
        let query = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        guard let parameters = try? FormURLEncoding.decode(query), let state = parameters["state"] ?? Self.signedState(parameters, entry.request),
            ConstantTime.equals(state, entry.request.state)
        else { return nil }
        entries[id] = nil
        return entry.request
    }

    /// The `state` claim of a JARM callback's `response`, unverified; `nil` for a plain request.
    private static func signedState(_ parameters: [OAuthParameter], _ request: AuthorizationRequest) -> String? {
        guard request.responseMode?.isJARM == true, let response = parameters["response"] else { return nil }
        return (try? UnverifiedJWT(response))?.claims["state"]?.stringValue
    }

    private func removeExpired() {
        let now = now()
        while head < order.count {
            let id = order[head]
            if let entry = entries[id], entry.expires > now { break }
            entries[id] = nil
            head += 1
        }
        compact()
    }

    /// The oldest id still kept, taken off the order.
    private func nextInOrder() -> String? {
        while head < order.count {
            let id = order[head]
            head += 1
            if entries[id] != nil { compact(); return id }
        }
        return nil
    }

    /// Drops the ids already passed once they are half the order, so it stays bounded.
    private func compact() {
        if head > 64, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
