internal import Foundation

/// Keeping a login and using it: a store, a key, and the hosts its token may go to.
///
/// ```swift
/// try await rp.save(login, in: store, as: key)
/// let session = rp.session(store: store, key: key, allowlist: .default(for: api))
/// ```
extension RelyingParty {
    /// Saves `login` in `store` under `key`, under the store's lock (so no refresh of another
    /// process interleaves), and returns what was saved. ``session(store:key:allowlist:options:)``
    /// then uses it.
    ///
    /// - Parameters:
    ///   - login: a login just completed.
    ///   - store: where it is kept (``FileKeychain``, ``InMemoryTokenStore``, a database).
    ///   - key: its key there.
    ///   - attributes: anything else to remember with it (never a secret).
    /// - Throws: the store's errors, as ``OIDCError`` (`storageFailure` for another error type).
    @discardableResult
    public func save(
        _ login: VerifiedLogin, in store: some TokenStore, as key: TokenStoreKey, attributes: [String: String] = [:]
    ) async throws(OIDCError) -> StoredLogin {
        try await save(StoredLogin(login, attributes: attributes), in: store, as: key)
    }

    /// Saves `login` in `store` under `key`, under the store's lock, and returns it: for a login
    /// made outside ``VerifiedLogin``, such as ``DeviceLogin/waitForLogin()``'s, which has no ID
    /// token when the provider's device grant sent none, or a client's own tokens.
    ///
    /// - Throws: the store's errors, as ``OIDCError`` (`storageFailure` for another error type).
    @discardableResult
    public func save(_ login: StoredLogin, in store: some TokenStore, as key: TokenStoreKey) async throws(OIDCError) -> StoredLogin {
        do { try await store.withLock(key) { try await store.save(login, for: key) } } catch let error as OIDCError { throw error } catch {
            throw AuthenticatedSession.storageFailure(error)
        }
        return login
    }

    /// A session over the login kept in `store` under `key`: it refreshes at this relying party's
    /// token endpoint, with its client authentication, and verifies the ID tokens refreshes bring
    /// with ``keys`` (unless `options` names other keys), under this relying party's security
    /// profile as at login (``AuthenticatedSession/Options/securityProfile``; ``SecurityProfile/fapi2``:
    /// PS256, ES256 or EdDSA only). Nothing is read before the first use.
    public func session(
        store: some TokenStore, key: TokenStoreKey, allowlist: HostAllowlist,
        options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) -> AuthenticatedSession {
        var options = options
        if options.refreshedIDTokenKeys == nil { options.refreshedIDTokenKeys = keys }
        options.securityProfile = options.securityProfile.orElse(configuration.securityProfile)
        options.stages = configuration.resourceStages + options.stages
        options.callStages = configuration.callStages
        return AuthenticatedSession(
            store: store, key: key, source: .refreshToken(tokenClient), transport: transport, allowlist: allowlist, options: options,
            now: tokenClient.now, logger: logger, dpopNonces: dpopNonces
        )
    }
}
