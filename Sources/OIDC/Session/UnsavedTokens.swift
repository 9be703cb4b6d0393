import Foundation
internal import Logging

/// Refreshed tokens the store refused (a full disk, a lost lock): the session uses them, since the
/// refresh token they replace is already spent, and saves them again at its next call, over the
/// login they replace only.
struct UnsavedTokens {
    /// The refreshed login.
    var login: StoredLogin
    /// The refresh token the login replaces: it is saved only over a stored login that still holds
    /// it, never over one deleted or replaced meanwhile. `nil`: the host application's tokens,
    /// saved over whatever is stored.
    var replaces: Secret?
    /// Why the last save failed.
    var problem: OIDCError

    /// What to do with these tokens, given the login the store holds now.
    enum Decision: Equatable {
        /// The store still holds the login they replace: save them over it.
        case save
        /// The store holds another login (a new login meanwhile): use that one, drop these.
        case adopt(StoredLogin)
        /// The login was deleted meanwhile (a logout elsewhere): drop these, and revoke them.
        case deleted
    }

    func decide(storedRow row: StoredLogin?) -> Decision {
        guard let replaces, row?.tokens.refreshToken != replaces else { return .save }
        guard let row else { return .deleted }
        return .adopt(row)
    }
}

extension AuthenticatedSession {
    /// Saves ``unsaved`` under a new lock at once, over the login they replace only; the login the
    /// store holds instead, when it holds another one (`nil` otherwise).
    func saveUnsavedUnderNewLock() async throws(OIDCError) -> StoredLogin? {
        do {
            let result = try await storage { try await self.store.withLock(self.key) { try await self.reconcileUnsaved() } }
            return result.adopted ? result.login?.marked(nil) : nil
        } catch where error.code == .notLoggedIn {
            throw error
        } catch {
            unsaved?.problem = error
            logger.warning("the store still refuses the refreshed tokens; they stay in memory", metadata: lineMetadata(.failure(error)))
            return nil
        }
    }

    /// Under the lock: saves ``unsaved`` when the store still holds the login they replace, and
    /// returns the login for this session to go on with (as stored, with any refresh mark):
    /// `adopted` when it is another login the store holds instead.
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` when the login was deleted meanwhile (another
    ///   instance logged out): the refreshed tokens are revoked (best effort), not saved.
    func reconcileUnsaved() async throws(OIDCError) -> (login: StoredLogin?, adopted: Bool) {
        let row = try await storage { try await self.store.load(self.key) }
        guard let pending = unsaved else { return (row, false) }
        switch pending.decide(storedRow: row) {
        case .deleted:
            unsaved = nil
            generation += 1
            current = nil
            loaded = true
            logger.notice("the login was deleted while its refreshed tokens waited to be saved; not saved, revoked", metadata: lineMetadata())
            await revoke(pending.login.tokens)
            throw OIDCError(
                .notLoggedIn,
                "The login was deleted from the store (logged out elsewhere) while its refreshed tokens waited to be saved; they were discarded, not saved. Log in again.")
        case .adopt(let row):
            unsaved = nil
            logger.notice("the store holds other tokens than those the refreshed tokens replace; using the store's", metadata: lineMetadata())
            current = row.marked(nil)
            return (row, true)
        case .save:
            do {
                try await storage { try await self.store.save(pending.login, for: self.key) }
                unsaved = nil
                logger.notice("refreshed tokens the store had refused are saved now", metadata: lineMetadata())
            } catch {
                unsaved?.problem = error
                logger.warning("the store still refuses the refreshed tokens; they stay in memory", metadata: lineMetadata(.failure(error)))
            }
            // While they stay unsaved, they are the live ones: the stored refresh token is spent.
            return (pending.login, false)
        }
    }

    /// Saves `login` again, the same refresh with a verified ID token added: over the first save, or,
    /// when the store refused that one, in its place among the tokens waiting to be saved.
    func keepAgain(_ login: StoredLogin) async {
        current = login
        guard unsaved == nil else {
            unsaved?.login = login
            return
        }
        do { try await storage { try await self.store.save(login, for: self.key) } } catch {
            // The first save holds the rotated refresh token already: only the ID token is behind.
            logger.warning("the store refused the verified ID token; the login keeps its previous one there", metadata: lineMetadata(.failure(error)))
        }
    }

    /// Makes `login` current and saves it; when the save fails, the tokens are used anyway (the
    /// refresh token they replace is spent), ``storageProblem`` says why, and they are saved again
    /// later over the login holding `spent` only (over anything for `nil`).
    func keep(_ login: StoredLogin, replacing spent: Secret?) async {
        current = login
        eventSink.yield(.tokensRefreshed)
        do {
            try await storage { try await self.store.save(login, for: self.key) }
            unsaved = nil
        } catch {
            // When the refreshed tokens were themselves unsaved ones, the store still holds the
            // login those replaced: that is what these are saved over.
            unsaved = UnsavedTokens(login: login, replaces: unsaved.map(\.replaces) ?? spent, problem: error)
            logger.warning("the store refused the refreshed tokens; they are used, and saved again next time", metadata: lineMetadata(.failure(error)))
        }
    }
}
