import Foundation
internal import Logging

/// Ending a login: revocation (best effort), deletion from the store, and telling the observers.
extension AuthenticatedSession {
    /// Under the store's lock: revokes the stored refresh token (or access token), best effort.
    /// A login of another issuer or client (``requireOwnLogin(_:)``) is not revoked here: its
    /// tokens must not go to this provider.
    func revokeStoredTokens() async {
        let stored = (try? await store.load(key)) ?? nil
        guard let login = unsaved?.login ?? stored ?? current else { return }
        do { try requireOwnLogin(login) } catch {
            logger.notice("the stored login is another issuer's or client's; deleted without revoking it", metadata: lineMetadata(.failure(error)))
            return
        }
        await revoke(login.tokens)
    }

    /// Revokes the refresh token of `tokens` (or their access token), best effort.
    func revoke(_ tokens: TokenSet) async {
        guard let client = source.tokenClient, client.provider.revocationEndpoint != nil else { return }
        let hint: TokenClient.TokenTypeHint = tokens.refreshToken == nil ? .accessToken : .refreshToken
        do {
            try await client.revoke(tokens.refreshToken ?? tokens.accessToken, hint: hint)
            logger.debug("revoked the stored token", metadata: lineMetadata(["token_type_hint": .string(hint.rawValue)]))
        } catch {
            // Best effort: the login is deleted anyway.
            logger.notice("revocation failed; the login is deleted anyway", metadata: lineMetadata(.failure(error)))
        }
    }

    /// Deletes the stored login and tells the observers why.
    func endLogin(_ reason: LogoutReason) async throws(OIDCError) {
        generation += 1
        unsaved = nil
        // Built only inside the log calls' autoclosures, so only for a level the handler takes.
        func metadata() -> Logger.Metadata { lineMetadata(["reason": .string(reason.name)]) }
        do { try await storage { try await self.store.delete(self.key) } } catch {
            logger.warning("the store failed to delete the login at logout", metadata: metadata().merging(.failure(error)) { $1 })
            throw error
        }
        if case .userInitiated = reason {
            logger.debug("logged out", metadata: metadata())
        } else {
            logger.notice("logged out", metadata: metadata())
        }
        current = nil
        loaded = true
        eventSink.yield(.loggedOut(reason))
        delegate?.userDidLogout(reason: reason)
    }
}

extension LogoutReason {
    /// The reason's name in log lines.
    var name: String {
        switch self {
        case .refreshRejected: "refresh_rejected"
        case .noRefreshToken: "no_refresh_token"
        case .unauthenticated: "unauthenticated"
        case .userInitiated: "user_initiated"
        case .unboundTokens: "unbound_tokens"
        }
    }
}
