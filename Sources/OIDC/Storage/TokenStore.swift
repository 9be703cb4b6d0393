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
    /// Whether the lock can be lost while `body` runs, and another instance take it meanwhile: a
    /// database lock whose connection breaks. Such a store must refuse the body's writes once the
    /// lock is lost (fencing), and ``AuthenticatedSession`` then marks each refresh in flight in
    /// the stored login (the attribute `oidc.refresh-in-flight`) before it sends the refresh
    /// token, so that an instance taking a lost lock waits for that refresh's tokens instead of
    /// spending the same refresh token again. A lock that lives as long as the process holding it
    /// (a file lock) cannot be lost: `false`, the default. A store that wraps another (for logging,
    /// metrics) must pass this on, or the protection is off.
    var lockCanBeLost: Bool { get }
    /// Deletes every login `selector` matches (a back-channel logout's user or session), and
    /// returns how many it deleted; none is no error. Each login is deleted under its lock, or
    /// in one statement the other instances see at once, so that a refresh in progress cannot
    /// write a deleted login back.
    ///
    /// Stores written before this requirement get a default that throws
    /// ``OIDCError/Code/storageFailure`` saying the store cannot: implement it to support
    /// back-channel logout (and pass it on, in a store that wraps another).
    func deleteLogins(_ selector: LoginSelector) async throws -> Int
    /// Makes sure a save replacing `login` under `key` will find room, before a refresh spends the
    /// refresh token it holds: called under the key's lock, just before the refresh is sent. A
    /// provider that rotates refresh tokens spends the old one as it answers, so an answer the store
    /// cannot keep would end the login; a store that can run out of room (files on a disk) holds
    /// that room here, and throws when it cannot, so that nothing is sent and the login stays.
    ///
    /// The default does nothing (a database, a keychain, memory). A store that wraps another must
    /// pass this on. ``FileKeychain`` writes and flushes the room (``FileKeychain/reserveSpace(toReplace:for:)``).
    func reserveSpace(toReplace login: StoredLogin, for key: TokenStoreKey) async throws
}

extension TokenStore {
    /// `false`: the lock lives as long as the task that holds it.
    public var lockCanBeLost: Bool { false }

    /// Nothing: this store needs no room held before a refresh.
    public func reserveSpace(toReplace login: StoredLogin, for key: TokenStoreKey) async throws {}

    /// Throws ``OIDCError/Code/storageFailure``: this store does not implement
    /// ``deleteLogins(_:)``. The error's context `unsupported` is `deleteLogins`.
    public func deleteLogins(_ selector: LoginSelector) async throws -> Int {
        throw OIDCError(
            .storageFailure,
            "\(type(of: self)) cannot delete logins by user or session: it does not implement TokenStore.deleteLogins(_:), which back-channel logout needs.",
            context: ["unsupported": "deleteLogins"])
    }
}
