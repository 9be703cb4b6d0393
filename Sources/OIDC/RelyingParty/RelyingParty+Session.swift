internal import Foundation

/// Keeping a login and using it: a store, a key, and the hosts its token may go to.
extension RelyingParty {
    /// Saves `login` in `store` under `key`, under the store's lock, and returns the session over
    /// it (``session(store:key:allowlist:options:)``).
    ///
    /// - Parameters:
    ///   - login: a login just completed.
    ///   - store: where it is kept (``FileKeychain``, ``InMemoryTokenStore``, a database).
    ///   - key: its key there.
    ///   - allowlist: the hosts that may receive the access token.
    ///   - attributes: anything else to remember with it (never a secret).
    ///   - options: the session's options.
    /// - Throws: the store's errors, as ``OIDCError`` (`storageFailure` for another error type).
    public func keep(
        _ login: VerifiedLogin, in store: some TokenStore, as key: TokenStoreKey, allowlist: HostAllowlist,
        attributes: [String: String] = [:], options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) async throws(OIDCError) -> AuthenticatedSession {
        let stored = StoredLogin(login, attributes: attributes)
        do { try await store.withLock(key) { try await store.save(stored, for: key) } } catch let error as OIDCError { throw error } catch {
            throw AuthenticatedSession.storageFailure(error)
        }
        return session(store: store, key: key, allowlist: allowlist, options: options)
    }

    /// Saves `login` in `store` under `key`, under the store's lock, and returns the session over
    /// it: for a login made outside ``VerifiedLogin``, such as ``DeviceLogin/waitForLogin()``'s, which
    /// has no ID token when the provider's device grant sent none.
    ///
    /// - Parameters:
    ///   - login: a login just completed, with its attributes (never a secret).
    ///   - store: where it is kept (``FileKeychain``, ``InMemoryTokenStore``, a database).
    ///   - key: its key there.
    ///   - allowlist: the hosts that may receive the access token.
    ///   - options: the session's options.
    /// - Throws: the store's errors, as ``OIDCError`` (`storageFailure` for another error type).
    public func keep(
        _ login: StoredLogin, in store: some TokenStore, as key: TokenStoreKey, allowlist: HostAllowlist,
        options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) async throws(OIDCError) -> AuthenticatedSession {
        do { try await store.withLock(key) { try await store.save(login, for: key) } } catch let error as OIDCError { throw error } catch {
            throw AuthenticatedSession.storageFailure(error)
        }
        return session(store: store, key: key, allowlist: allowlist, options: options)
    }

    /// A session over the login kept in `store` under `key`: it refreshes at this relying party's
    /// token endpoint, with its client authentication, and verifies the ID tokens refreshes bring
    /// with ``keys`` (unless `options` names other keys), under ``securityProfile`` as at login
    /// (``SecurityProfile/fapi2``: PS256, ES256 or EdDSA only). Nothing is read before the first use.
    public func session(
        store: some TokenStore, key: TokenStoreKey, allowlist: HostAllowlist,
        options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) -> AuthenticatedSession {
        var options = options
        if options.refreshedIDTokenKeys == nil { options.refreshedIDTokenKeys = keys }
        if securityProfile == .fapi2 {
            // FAPI 2.0 §5.4.1 holds every ID token, the refreshed ones too.
            options.refreshedIDTokenAlgorithms = (options.refreshedIDTokenAlgorithms ?? JWSAlgorithm.asymmetric).intersection(Self.fapi2Algorithms)
        }
        return AuthenticatedSession(
            store: store, key: key, source: .refreshToken(tokenClient), transport: transport, allowlist: allowlist, options: options,
            now: tokenClient.now, logger: logger, dpopNonces: dpopNonces
        )
    }
}
