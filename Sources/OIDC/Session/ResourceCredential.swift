public import Foundation

/// What a request to a resource carries for a session's login, for an HTTP client that is not the
/// session's own (an SDK that asks for an `Authorization` header and lets you sign its requests):
/// the access token as `Bearer`, or for a DPoP-bound login as `DPoP` with a fresh proof of each
/// request (RFC 9449 §7.1). ``AuthenticatedSession/send(_:)`` uses the same value on each attempt,
/// so "DPoP-bound" has one definition: the login's (a `DPoP` header comes with each request's headers).
///
/// ```swift
/// var credential = try await session.credential(for: url)
/// var headers = try credential.headers(method: "POST", url: url)     // Authorization, DPoP
/// // after a 401:
/// if credential.nonceChallenged(response, from: url) { /* send again with fresh headers */ }
/// else { credential = try await session.credential(afterRefusalOf: credential, at: url) }
/// ```
///
/// It prints without the token (a `Secret`).
public struct ResourceCredential: Sendable {
    /// The access token to send.
    let accessToken: Secret
    /// The login's proofs when its tokens are DPoP-bound; `nil` for bearer tokens.
    let proofs: DPoP?
    /// The scopes the login was granted (the start of a step-up's union).
    let scopes: [String]
    /// The hosts the token may go to: ``headers(method:url:)`` makes none for another.
    let allowlist: HostAllowlist

    /// Whether the login's tokens are DPoP-bound: each request then needs a fresh proof (``headers(method:url:)``).
    var isDPoPBound: Bool { proofs != nil }

    /// The `Authorization` header, and for a DPoP-bound login a fresh `DPoP` proof of `method` and
    /// `url` with the server's latest nonce and the token's hash; make them for each request (a
    /// proof is good once).
    ///
    /// - Throws: ``OIDCError/Code/hostNotAllowed`` for a `url` off the session's allowlist (the
    ///   token goes nowhere else); ``OIDCError/Code/invalidArgument`` when `url` cannot be a proof's `htu`.
    public func headers(method: String, url: URL) throws(OIDCError) -> HTTPHeaders {
        try allowlist.check(url)
        var headers = HTTPHeaders()
        _ = try DPoP.present(accessToken: accessToken, proofs: proofs, method: method, url: url, headers: &headers)
        return headers
    }

    /// After the resource's `response` to a request to `url`: records a `DPoP-Nonce` it sent, and
    /// says whether it was a nonce challenge (a 401 `use_dpop_nonce`), which one retry with fresh
    /// ``headers(method:url:)`` answers; any other 401 refused the token
    /// (``AuthenticatedSession/credential(afterRefusalOf:at:)``). Always `false` for bearer tokens.
    public func nonceChallenged(_ response: HTTPResponse, from url: URL) -> Bool {
        proofs?.nonceChallenged(response, to: url) ?? false
    }

    /// After a 403 `insufficient_scope` from `url` (RFC 6750 §3.1): the scopes a step-up login asks
    /// for, those granted then those the resource named, each once; `nil` for any other answer.
    public func stepUpScopes(after response: HTTPResponse, from url: URL) -> [String]? {
        guard let error = InsufficientScope.error(response, from: url) else { return nil }
        var union: [String] = []
        for scope in scopes + (error.requiredScopes ?? []) where !union.contains(scope) { union.append(scope) }
        return union
    }
}

extension AuthenticatedSession {
    /// The credential of the session's login for a request to `url` that another HTTP client sends:
    /// the allowlist checked for `url` first, the login refreshed first when it expires within the
    /// margin (or in any case with `forceRefresh`), under the store's lock as every refresh.
    ///
    /// - Throws: ``OIDCError/Code/hostNotAllowed`` for a `url` off the allowlist (nothing read);
    ///   ``OIDCError/Code/notLoggedIn`` (also for a DPoP-bound login whose key is missing or another
    ///   key); the refresh's errors (a rejected refresh has logged the user out).
    public func credential(for url: URL, forceRefresh: Bool = false) async throws(OIDCError) -> ResourceCredential {
        try Self.admit(url, to: allowlist, logger: logger)
        return try credential(of: try await validLogin(forceRefresh: forceRefresh))
    }

    /// After the resource at `url` refused `credential` (a 401 that was no nonce challenge): a
    /// refreshed credential, once however many requests saw the refusal (a request that comes after
    /// another's refresh gets the new tokens without a second refresh), as ``send(_:)`` does.
    ///
    /// - Throws: as ``credential(for:forceRefresh:)``.
    public func credential(afterRefusalOf credential: ResourceCredential, at url: URL) async throws(OIDCError) -> ResourceCredential {
        try Self.admit(url, to: allowlist, logger: logger)
        return try self.credential(of: try await refresh(afterRefusalOf: credential.accessToken, at: url))
    }

    /// `login`'s credential, with this session's nonces and clock.
    nonisolated func credential(of login: StoredLogin) throws(OIDCError) -> ResourceCredential {
        ResourceCredential(
            accessToken: login.tokens.accessToken, proofs: try DPoP.proofs(for: login, describedAs: "under \(key)", nonces: dpopNonces, now: now),
            scopes: login.tokens.scopes, allowlist: allowlist)
    }
}
