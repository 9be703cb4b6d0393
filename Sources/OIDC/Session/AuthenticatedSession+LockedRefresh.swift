import Foundation
internal import Logging

/// The refresh: one for every caller of this session (single flight), run under the store's lock,
/// which re-reads the store first so that tokens another process already rotated are used, not
/// spent again. See <doc:LostLocks> for stores whose lock can be lost.
extension AuthenticatedSession {
    /// What a refresh under the lock came to.
    enum LockedRefresh: Sendable {
        /// The login to use.
        case done(StoredLogin)
        /// Another instance's refresh is marked in flight for this many more seconds at most.
        case inFlightElsewhere(TimeInterval)
    }

    /// OAuth errors that mean this login's refresh is rejected for good (RFC 6749 §5.2): the grant
    /// (refresh token) is dead. Anything else keeps the user in: a 5xx, a timeout, an HTML page from a
    /// proxy, a broken body; `invalid_client`, which says the client's credentials or registration
    /// are wrong, not the login (a fixed configuration uses the same refresh token again); and
    /// `invalid_request`, `invalid_scope`, `unauthorized_client` or `unsupported_grant_type`, which
    /// say the request was wrong, and which an intermediary can forge as easily as an HTML page.
    static let rejectingErrors: Set<String> = ["invalid_grant"]

    static let loggedOutMeanwhile = OIDCError(.notLoggedIn, "The user was logged out while the tokens were being refreshed.")

    /// One refresh for everyone: callers during a refresh wait for it; callers after it, whose
    /// token was already replaced, get the new one without another refresh.
    func refresh(replacing stale: Secret?, saveOnly: Bool = false, reason: String = "expiring") async throws(OIDCError) -> StoredLogin {
        if let running = refreshes.task(for: 0) {
            logger.trace("joining the refresh in flight", metadata: lineMetadata(["reason": .string(reason)]))
            let runningSavesOnly = refreshSavesOnly
            let result = try await Self.value(of: running)
            // A task that only saved again tokens the store had refused brings nothing new: a caller
            // whose token was just refused (a 401) still needs a refresh, once that save is done.
            guard !saveOnly, runningSavesOnly, let stale, result.tokens.accessToken == stale else { return result }
            return try await refresh(replacing: stale, reason: reason)
        }
        if let current, let stale, current.tokens.accessToken != stale,
            !current.tokens.needsRefresh(at: now(), margin: options.refreshMargin.timeInterval)
        {
            return current
        }
        // A caller cancelled already does not start a refresh it would not wait for.
        if Task.isCancelled { throw OIDCError(.cancelled, "Cancelled before the tokens were refreshed.") }
        // Isolated to this actor: it, not its caller (who may be cancelled and stop waiting), ends
        // its turn as the refresh in flight.
        let task = refreshes.launch(0) { number in
            Task {
                defer { self.refreshes.land(0, number) }
                return try await self.refreshUnderLock(replacing: stale, saveOnly: saveOnly, reason: reason)
            }
        }
        refreshSavesOnly = saveOnly
        return try await Self.value(of: task)
    }

    /// The shared refresh's login. A caller cancelled while it runs stops waiting, with
    /// ``OIDCError/Code/cancelled``; the refresh goes on, and its tokens are kept for the next call.
    private static func value(of task: Task<StoredLogin, any Error>) async throws(OIDCError) -> StoredLogin {
        try await SingleFlight<Int, StoredLogin>.value(
            of: task, cancelled: OIDCError(.cancelled, "Cancelled while the tokens were being refreshed; the refresh goes on, and the next call uses its tokens."),
            failed: storageFailure
        )
    }

    private func refreshUnderLock(replacing stale: Secret?, saveOnly: Bool, reason: String) async throws(OIDCError) -> StoredLogin {
        var stale = stale
        let began = ContinuousClock.now
        var pause = Duration.milliseconds(25)
        // Bounded: each round that waits for another instance sleeps first, and those rounds end
        // after `inFlightRefreshWait`; a login adopted from the store starts one more round, once.
        while true {
            let asked = ContinuousClock.now, replacing = stale
            let outcome = try await storage {
                try await self.store.withLock(self.key) {
                    await self.logLockWait(since: asked)
                    return try await self.refreshLocked(replacing: replacing, saveOnly: saveOnly, reason: reason)
                }
            }
            switch outcome {
            case .done(let login):
                // Refused on a lost lock: another instance may be waiting for these tokens. Save
                // them now under a new lock (not nested in the one just released).
                guard unsaved != nil, !saveOnly, store.lockCanBeLost else { return login }
                guard let adopted = try await saveUnsavedUnderNewLock() else { return login }
                // The store holds another login than the one refreshed (a new login meanwhile):
                // that one is this session's now, refreshed if it needs to be.
                if !adopted.tokens.needsRefresh(at: now(), margin: options.refreshMargin.timeInterval) { return adopted }
                stale = adopted.tokens.accessToken
            case .inFlightElsewhere(let remaining):
                let left = options.inFlightRefreshWait - (ContinuousClock.now - began)
                guard left > .zero else { throw Self.refreshInFlightElsewhere(remaining) }
                logger.debug(
                    "another instance's refresh of this login is in flight; waiting for its tokens",
                    metadata: lineMetadata(["retry_after_s": .seconds(remaining)]))
                do { try await Task.sleep(for: min(pause, left, .seconds(remaining))) } catch {
                    throw OIDCError(.cancelled, "Cancelled while waiting for another instance's refresh of this login.")
                }
                pause = min(pause * 2, .seconds(1))
            }
        }
    }

    private static func refreshInFlightElsewhere(_ remaining: TimeInterval) -> OIDCError {
        let seconds = String(Int(remaining.rounded(.up)))
        return OIDCError(
            .temporarilyUnavailable,
            "Another instance is refreshing this login: its lock on the token store was lost while its refresh was at the provider, and its new tokens have not reached the store yet. The login is kept; try again in \(seconds) s, by which time the tokens are saved or that refresh counts as failed.",
            context: ["retryAfter": seconds]
        ).retrying(after: .seconds(remaining.rounded(.up)))
    }

    /// Under the store's lock: re-read, adopt tokens another process rotated, else get new ones
    /// from the source.
    private func refreshLocked(replacing stale: Secret?, saveOnly: Bool, reason: String) async throws(OIDCError) -> LockedRefresh {
        let startedIn = generation
        // Our refreshed tokens that the store could not keep are saved first, if the store still
        // holds the login they replace.
        let row: StoredLogin?
        if unsaved != nil { row = try await reconcileUnsaved().login } else { row = try await storage { try await self.store.load(self.key) } }
        guard generation == startedIn else { throw Self.loggedOutMeanwhile }
        if let row { try requireOwnLogin(row) }
        let foreignMark = marks.foreign(in: row)
        let stored = row?.marked(nil)
        current = stored
        if saveOnly, let stored { return .done(stored) }
        if let stored, stored.tokens.accessToken != stale, !stored.tokens.needsRefresh(at: now(), margin: options.refreshMargin.timeInterval) {
            logger.debug("using tokens another process refreshed", metadata: lineMetadata(["expires_at": expiry(stored.tokens)]))
            eventSink.yield(.tokensRefreshed)
            return .done(stored)
        }
        switch source.kind {
        case .refreshToken(let client):
            return try await refreshWithToken(stored, foreignMark: foreignMark, client: client, stale: stale, reason: reason, startedIn: startedIn)
        case .host(let provide):
            return try await askHost(provide, stored: stored, reason: reason, startedIn: startedIn)
        case .ownGrant(let client, let own, let dpopKey):
            return try await requestOwnGrant(client, own, dpopKey: dpopKey, stored: stored, reason: reason, startedIn: startedIn)
        }
    }

    /// Under the lock: spends the stored refresh token at the provider (marked in flight first for
    /// a store whose lock can be lost), and keeps what comes back. A rejection logs the user out.
    private func refreshWithToken(
        _ stored: StoredLogin?, foreignMark: RefreshMark?, client: TokenClient, stale: Secret?, reason: String, startedIn: Int
    ) async throws(OIDCError) -> LockedRefresh {
        guard let stored else {
            throw OIDCError(.notLoggedIn, "Nobody is logged in under \(key); log in first.")
        }
        guard let refreshToken = stored.tokens.refreshToken else {
            // Nothing to refresh with: the login stays until it has really expired or is replaced.
            if stored.tokens.accessToken != stale, !stored.tokens.isExpired(at: now()) { return .done(stored) }
            throw OIDCError(.notLoggedIn, "The access token is expired or refused and the login has no refresh token; log in again.")
        }
        let mark: RefreshMark?
        // A DPoP-bound login refreshes with its own key (its refresh token is bound too), checked
        // before the refresh is marked in flight.
        // The login's resource (RFC 8707) goes with every refresh of it.
        let client = client.proving(try stored.dpopProofKey(describedAs: "under \(key)"), nonces: dpopNonces, now: now).indicating(stored.resource)
        // Room for the answer first: a rotating refresh token is spent as the provider answers.
        try await storage { try await self.store.reserveSpace(toReplace: stored, for: self.key) }
        switch try await markRefresh(of: stored, foreignMark: foreignMark, client: client) {
        case .inFlightElsewhere(let remaining): return .inFlightElsewhere(remaining)
        case .marked(let new): mark = new
        }
        let answer: TokenSet
        logger.debug("refreshing tokens", metadata: lineMetadata(["grant_type": "refresh_token", "reason": .string(reason)]))
        let started = ContinuousClock.now
        // From the send: the provider may rotate the refresh token before its answer arrives.
        let sending = RefreshCommit.open(holdingAtMost: RefreshCommit.sendingBound)
        do { answer = try await client.refresh(refreshToken) } catch {
            sending.close()
            if error.code == .providerError, let oauth = error.providerError, Self.rejectingErrors.contains(oauth.error), generation == startedIn {
                logger.notice("refresh rejected by the provider; logging out", metadata: lineMetadata(.failure(error)))
                let reason = LogoutReason.refreshRejected(error.providerError)
                try await endLogin(reason)
                throw error.endingLogin(reason)
            }
            if error.code == .senderConstraintMissing, generation == startedIn {
                // The provider took the refresh token and answered with bearer tokens: those are
                // refused, and the refresh token may be rotated away, so the login cannot go on.
                logger.notice("refresh answered with unbound tokens; logging out", metadata: lineMetadata(.failure(error)))
                try await endLogin(.unboundTokens)
                throw error.endingLogin(.unboundTokens)
            }
            logger.warning("refresh failed; the login is kept and the next call tries again", metadata: lineMetadata(.failure(error)))
            if mark != nil { await removeMark(from: stored) }
            throw error
        }
        guard generation == startedIn else {
            sending.close()
            throw Self.loggedOutMeanwhile
        }
        // The old refresh token is spent: its replacement is saved first, durably, with the login's
        // ID token, and only then is a new ID token verified (which may fetch the provider's keys,
        // up to the transport's timeout) and saved in its turn. A process killed meanwhile keeps
        // the rotated refresh token.
        let newIDToken = answer.idToken
        var refreshed = stored
        // A reading of the login's first ID token does not describe the refreshed tokens.
        refreshed.idToken = nil
        var withoutIDToken = answer
        withoutIDToken.idToken = nil
        refreshed.tokens = stored.tokens.refreshed(with: withoutIDToken)
        let commit = RefreshCommit.open()
        sending.close()
        await keep(refreshed, replacing: refreshToken)
        commit.close()
        if newIDToken != nil, let verified = await checkedIDToken(in: answer, for: stored, client: client).idToken {
            refreshed.tokens.idToken = verified
            await keepAgain(refreshed)
        }
        logger.debug(
            "tokens refreshed",
            metadata: lineMetadata([
                "grant_type": "refresh_token", "duration_ms": .milliseconds(since: started), "expires_at": expiry(refreshed.tokens),
                "refresh_token_rotated": .bool(answer.refreshToken != nil && answer.refreshToken != refreshToken),
                "id_token": .string(newIDToken == nil ? "none" : refreshed.tokens.idToken == newIDToken ? "verified" : "dropped"),
            ])
        )
        return .done(refreshed)
    }
}
