public import Foundation
public import Logging

/// The setters that ``AuthenticatedSession/Options`` replaced, kept for callers of 0.x.
extension AuthenticatedSession {
    /// ``Options/refreshMargin`` in seconds.
    @available(*, deprecated, message: "Use options.refreshMargin")
    public var refreshMargin: TimeInterval { options.refreshMargin.timeInterval }

    /// ``Options/temporarilyUnavailableDelay`` in seconds.
    @available(*, deprecated, message: "Use options.temporarilyUnavailableDelay")
    public var temporarilyUnavailableDelay: TimeInterval { options.temporarilyUnavailableDelay.timeInterval }

    /// ``Options/requestOptions``.
    @available(*, deprecated, message: "Use options.requestOptions")
    public var requestOptions: HTTPRequestOptions { options.requestOptions }

    /// ``Options/inFlightRefreshWait`` in seconds.
    @available(*, deprecated, message: "Use options.inFlightRefreshWait")
    public var inFlightRefreshWait: TimeInterval { options.inFlightRefreshWait.timeInterval }

    /// Sets ``Options/refreshedIDTokenKeys``.
    @available(*, deprecated, message: "Pass Options(refreshedIDTokenKeys:) at init, or use RelyingParty.session(store:key:allowlist:options:)")
    public func verifyRefreshedIDTokens(with keys: JWKSCache) { options.refreshedIDTokenKeys = keys }

    /// Sets ``Options/refreshMargin``, in seconds.
    @available(*, deprecated, message: "Pass Options(refreshMargin:) at init")
    public func setRefreshMargin(_ seconds: TimeInterval) {
        options.refreshMargin = Options.duration(seconds, fallback: .seconds(60))
        options = options.inRange
    }

    /// Sets ``Options/requestOptions``.
    @available(*, deprecated, message: "Pass Options(requestOptions:) at init")
    public func setRequestOptions(_ requestOptions: HTTPRequestOptions) { options.requestOptions = requestOptions }

    /// Sets ``Options/temporarilyUnavailableDelay``, in seconds; a value that is not a finite number
    /// keeps the default (60 s).
    @available(*, deprecated, message: "Pass Options(temporarilyUnavailableDelay:) at init")
    public func setTemporarilyUnavailableDelay(_ seconds: TimeInterval) {
        options.temporarilyUnavailableDelay = Options.duration(seconds, fallback: .seconds(60))
        options = options.inRange
    }

    /// Sets ``Options/inFlightRefreshWait``, in seconds; a value that is not a finite number keeps
    /// the default (10 s).
    @available(*, deprecated, message: "Pass Options(inFlightRefreshWait:) at init")
    public func setInFlightRefreshWait(_ seconds: TimeInterval) {
        options.inFlightRefreshWait = Options.duration(seconds, fallback: .seconds(10))
        options = options.inRange
    }

    /// ``refreshNow()``, under its earlier name (which read as the token, not the act).
    @available(*, deprecated, renamed: "refreshNow()")
    @discardableResult
    public func refreshToken() async throws(OIDCError) -> TokenSet { try await refreshNow() }
}

extension AuthenticatedSession.Options {
    /// These options with every duration brought into its documented range: a negative one
    /// becomes zero, one beyond its bound the bound. The session does this itself.
    @available(*, deprecated, message: "validated is internal plumbing: the session brings its options into range itself; pass the options as they are")
    public var validated: AuthenticatedSession.Options { inRange }
}

extension AuthenticatedSession {
    /// The session of the last logged-in user kept under `key`, or `nil` when there is none
    /// (the Schibsted SDK's `resumeLastLoggedInUser`).
    ///
    /// - Parameters:
    ///   - store: where the login is kept and locked.
    ///   - key: the login's key.
    ///   - source: where new tokens come from.
    ///   - transport: sends the resource requests.
    ///   - allowlist: the hosts that may receive the bearer token.
    ///   - options: as for ``init(store:key:source:transport:allowlist:options:now:logger:)``.
    ///   - logger: the session's ``logger``; `nil` (the default) logs nothing.
    @available(
        *, deprecated,
        message: "use RelyingParty.session(store:key:allowlist:options:) (or AuthenticatedSession.init), and `try await session.login == nil` to see that nobody is logged in"
    )
    public static func resumeLastLoggedInUser(
        store: any TokenStore, key: TokenStoreKey, source: TokenSource, transport: any HTTPTransport, allowlist: HostAllowlist,
        options: Options = Options(), logger: Logger? = nil
    ) async throws -> AuthenticatedSession? {
        guard try await store.load(key) != nil else { return nil }
        return AuthenticatedSession(
            store: store, key: key, source: source, transport: transport, allowlist: allowlist, options: options, logger: logger
        )
    }
}
