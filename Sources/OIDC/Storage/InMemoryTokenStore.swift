/// A ``TokenStore`` in memory: for tests, and for servers that keep tokens only while they run.
/// Its lock is exclusive within the process.
public actor InMemoryTokenStore: TokenStore {
    private var logins: [TokenStoreKey: StoredLogin] = [:]
    private var locks = KeyedLocks<TokenStoreKey>()

    /// A store holding `logins`; empty by default.
    public init(_ logins: [TokenStoreKey: StoredLogin] = [:]) {
        self.logins = logins
    }

    public func load(_ key: TokenStoreKey) -> StoredLogin? { logins[key] }

    /// Keeps `login` as every store does: its tokens, not this process's reading of its ID token (`StoredLogin.idToken`).
    public func save(_ login: StoredLogin, for key: TokenStoreKey) {
        var kept = login
        kept.idToken = nil
        logins[key] = kept
    }

    public func delete(_ key: TokenStoreKey) { logins[key] = nil }

    /// Deletes the logins `selector` matches, each under its lock; how many.
    public func deleteLogins(_ selector: LoginSelector) async throws -> Int {
        var deleted = 0
        for key in logins.keys.sorted(by: { ($0.service, $0.account) < ($1.service, $1.account) }) where logins[key].map(selector.matches) == true {
            deleted += try await withLock(key) {
                // Re-read under the lock: a save meanwhile may have replaced the login.
                guard await self.load(key).map(selector.matches) == true else { return 0 }
                await self.delete(key)
                return 1
            }
        }
        return deleted
    }

    /// Every key with a login.
    public var keys: [TokenStoreKey] { Array(logins.keys) }

    public func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        await acquire(key)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: TokenStoreKey) async {
        guard !locks.take(key) else { return }
        await withCheckedContinuation { locks.enqueue(key, $0) }
    }

    private func release(_ key: TokenStoreKey) {
        locks.release(key)
    }
}
