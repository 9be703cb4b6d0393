internal import Foundation
internal import Logging

extension AuthenticatedSession {
    /// Where a session's new tokens come from: ``refreshToken(_:)`` (the stored refresh token at the
    /// provider) or ``host(_:)`` (the host application's token provider).
    ///
    /// A struct with static factories rather than an enum, so that new sources are not a breaking
    /// change to anyone's `switch`: write `.refreshToken(client)` and `.host { … }` as before.
    public struct TokenSource: Sendable {
        enum Kind: Sendable {
            case refreshToken(TokenClient)
            case host(@Sendable () async -> TokenProviderOutcome)
            // `dpopKey` makes the key of each new grant (a relying party's ``DPoPUse``).
            /// A grant of the client's own (client credentials, or an assertion it presents): asked
            /// anew when the tokens expire. `dpopKey` makes the key of each new grant.
            case ownGrant(TokenClient, OwnGrant, dpopKey: (@Sendable () -> Result<DPoPKey?, OIDCError>)? = nil)
        }

        /// What a grant of the client's own asks for: client credentials, or the JWT bearer grant
        /// with the assertion its holder has now.
        struct OwnGrant: Sendable {
            var grant: StoredLogin.Grant
            /// The JWT bearer grant's assertion, read anew for each request (a rotated file).
            var assertion: (@Sendable () async throws(OIDCError) -> Secret)?

            static func clientCredentials(scopes: [String], parameters: [OAuthParameter]) -> OwnGrant {
                OwnGrant(grant: .clientCredentials(scopes: scopes, parameters: parameters))
            }
        }

        let kind: Kind

        /// The stored refresh token, at the token endpoint of `client`'s provider (RFC 6749 §6).
        public static func refreshToken(_ client: TokenClient) -> TokenSource { TokenSource(kind: .refreshToken(client)) }

        /// The host application's token provider: a host that owns the login (a banking app
        /// embedding a partner's pages) hands the session its tokens instead of a refresh token.
        /// It runs under the store's lock, one call at a time; it must not call back into this
        /// session.
        public static func host(_ provide: @escaping @Sendable () async -> TokenProviderOutcome) -> TokenSource {
            TokenSource(kind: .host(provide))
        }

        /// Client credentials (RFC 6749 §4.4) at `client`'s token endpoint: a daemon's own tokens.
        /// There is no refresh token; when the access token expires (or a resource refuses it), the
        /// session asks for a new one, once for every caller and, under the store's lock, once for
        /// every process sharing the store. No login is needed first.
        public static func clientCredentials(_ client: TokenClient, scopes: [String] = [], parameters: [OAuthParameter] = []) -> TokenSource {
            TokenSource(kind: .ownGrant(client, .clientCredentials(scopes: scopes, parameters: parameters)))
        }

        /// The JWT bearer grant (RFC 7523 §2.1) at `client`'s token endpoint: `assertion` is asked
        /// for the JWT each time new tokens are needed (read a workload identity file there, so
        /// that its owner's rotation is followed), and traded for tokens; there is no refresh token
        /// to spend, and a refused assertion logs nobody out: the next call asks again.
        public static func jwtBearer(
            _ client: TokenClient, scopes: [String] = [], parameters: [OAuthParameter] = [],
            assertion: @escaping @Sendable () async throws(OIDCError) -> Secret
        ) -> TokenSource {
            TokenSource(kind: .ownGrant(client, OwnGrant(grant: .jwtBearer(scopes: scopes, parameters: parameters), assertion: assertion)))
        }

        /// The token client this source refreshes with, and revokes with at logout; `nil` for a
        /// host application's source.
        public var tokenClient: TokenClient? {
            switch kind {
            case .refreshToken(let client), .ownGrant(let client, _, _): client
            case .host: nil
            }
        }
    }

    /// What the host application's token provider said last: whether to ask it again yet.
    struct HostSourceState {
        /// No call before this time (it said "temporarily unavailable").
        var retryAfter: Date?
        /// It said nobody is signed in: no call until ``AuthenticatedSession/refreshNow()``.
        var unauthenticated = false
    }

    /// Under the lock: asks for the client's own tokens (client credentials, or the JWT bearer
    /// grant with the assertion as it is now), and keeps them. A refused request logs nobody out:
    /// there is no login to end, and the next call asks again.
    func requestOwnGrant(
        _ client: TokenClient, _ own: TokenSource.OwnGrant, dpopKey: (@Sendable () -> Result<DPoPKey?, OIDCError>)?,
        stored: StoredLogin?, reason: String, startedIn: Int
    ) async throws(OIDCError) -> LockedRefresh {
        // A new key for each grant, when the relying party binds its tokens (its DPoPUse); the
        // login's resource (RFC 8707) asked for again.
        let client = client.proving(ifGiven: try dpopKey?().get() ?? nil, nonces: dpopNonces, now: now).indicating(stored?.resource)
        let grant = own.grant
        logger.debug("requesting tokens", metadata: lineMetadata(["grant_type": .string(grant.type.rawValue), "reason": .string(reason)]))
        let tokens: TokenSet
        if let assertion = own.assertion {
            tokens = try await client.jwtBearer(assertion: try await assertion(), scopes: grant.scopes, parameters: grant.parameters)
        } else {
            tokens = try await client.clientCredentials(scopes: grant.scopes, parameters: grant.parameters)
        }
        guard generation == startedIn else { throw Self.loggedOutMeanwhile }
        var login = StoredLogin(
            tokens: tokens, issuer: client.provider.issuer, clientID: client.clientID, subject: nil, provider: client.provider,
            attributes: stored?.attributes ?? [:]
        )
        login.dpopKey = client.provingKey
        login.grant = grant
        login.resource = stored?.resource
        await keep(login, replacing: nil)
        return .done(login)
    }

    /// Under the lock: asks the host application's token provider for tokens, and keeps them.
    func askHost(
        _ provide: @Sendable () async -> TokenProviderOutcome, stored: StoredLogin?, reason: String, startedIn: Int
    ) async throws(OIDCError) -> LockedRefresh {
        guard !host.unauthenticated else {
            throw OIDCError(.notLoggedIn, "The host application said nobody is signed in; call refreshNow() when someone is.")
        }
        if let retryAfter = host.retryAfter, now() < retryAfter {
            throw OIDCError(
                .temporarilyUnavailable, "The host application's token provider is temporarily unavailable; try again after \(retryAfter.formatted(.iso8601)).",
                context: ["retryAfter": String(Int(retryAfter.timeIntervalSince(now()).rounded(.up)))]
            ).retrying(after: .seconds(retryAfter.timeIntervalSince(now()).rounded(.up)))
        }
        logger.debug("asking the host application for tokens", metadata: lineMetadata(["reason": .string(reason)]))
        switch await provide() {
        case .token(let tokens):
            guard generation == startedIn else { throw Self.loggedOutMeanwhile }
            host.retryAfter = nil
            let login = StoredLogin(
                tokens: tokens, issuer: stored?.issuer ?? "", clientID: stored?.clientID ?? "", subject: stored?.subject,
                provider: stored?.provider, attributes: stored?.attributes ?? [:]
            )
            await keep(login, replacing: nil)
            return .done(login)
        case .temporarilyUnavailable(let delay):
            // A delay that is not a sensible number of seconds gets the default.
            let seconds = delay.flatMap { $0.isFinite && $0 >= 0 && $0 <= 86_400 ? $0 : nil } ?? options.temporarilyUnavailableDelay.timeInterval
            host.retryAfter = now().addingTimeInterval(seconds)
            logger.notice("the host's token provider is temporarily unavailable", metadata: lineMetadata(["retry_after_s": .seconds(seconds)]))
            throw OIDCError(
                .temporarilyUnavailable, "The host application's token provider is temporarily unavailable; the session asks again in \(Int(seconds.rounded(.up))) s.",
                context: ["retryAfter": String(Int(seconds.rounded(.up)))]
            ).retrying(after: .seconds(seconds.rounded(.up)))
        case .unauthenticated:
            host.unauthenticated = true
            try await endLogin(.unauthenticated)
            throw OIDCError(.notLoggedIn, "The host application said nobody is signed in.").endingLogin(.unauthenticated)
        }
    }
}

/// What a host application's token provider answers: the session asks it for tokens instead of
/// refreshing itself.
public enum TokenProviderOutcome: Sendable {
    /// Fresh tokens.
    case token(TokenSet)
    /// No token now; ask again after the delay in seconds (the session's
    /// ``AuthenticatedSession/Options/temporarilyUnavailableDelay``, one minute by default, when
    /// `nil`). Calls in between fail at once with ``OIDCError/Code/temporarilyUnavailable``.
    case temporarilyUnavailable(retryAfter: Double? = nil)
    /// Nobody is signed in: the session clears everything and stops asking until
    /// ``AuthenticatedSession/refreshNow()`` is called (when another user signs in).
    case unauthenticated
}
