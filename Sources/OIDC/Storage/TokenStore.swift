/// Where logins are kept between runs: ``FileKeychain`` on disk, ``InMemoryTokenStore`` for tests,
/// or your own (a keychain, a database).
///
/// Implementations must make ``save(_:for:)`` atomic (a reader sees the old or the new login, never
/// a mix) and ``withLock(_:_:)`` exclusive for a key, across processes when the store is shared
/// between processes: the session refreshes under that lock, so a rotating refresh token is spent
/// once.
public protocol TokenStore: Sendable {
    /// The login kept under `key`, or `nil`.
    func load(_ key: TokenStoreKey) async throws -> StoredLogin?
    /// Keeps `login` under `key`, replacing what was there.
    func save(_ login: StoredLogin, for key: TokenStoreKey) async throws
    /// Forgets the login under `key`; nothing happens when there is none.
    func delete(_ key: TokenStoreKey) async throws
    /// Runs `body` while holding the exclusive lock of `key`.
    func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T
}
