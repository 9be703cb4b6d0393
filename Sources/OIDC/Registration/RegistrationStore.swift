public import Foundation

/// Where dynamic client registrations are kept, one per issuer, so that every later login (of any
/// profile, in any process) reuses the client instead of registering a new one each run.
public protocol RegistrationStore: Sendable {
    /// The registration kept for `issuer`, if any.
    func registration(for issuer: String) async throws(OIDCError) -> ClientRegistration?
    /// Keeps `registration` for its issuer, replacing any other.
    func save(_ registration: ClientRegistration) async throws(OIDCError)
    /// Forgets the registration of `issuer` (the server refused it: `invalid_client`).
    func remove(for issuer: String) async throws(OIDCError)
    /// Runs `body` while no other caller of this method for `issuer` runs: a login looks for a
    /// kept registration and registers only under it, so that two first logins at once (two
    /// processes, two tasks) register one client, not two. A store shared between processes
    /// must make it exclusive across them. The default runs `body` without a lock.
    func withRegistrationLock<T: Sendable>(for issuer: String, _ body: @Sendable () async throws -> T) async throws -> T
}

extension RegistrationStore {
    /// Runs `body` without a lock: a store that is not shared registers at most twice.
    public func withRegistrationLock<T: Sendable>(for issuer: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await body()
    }
}

/// Registrations kept in memory, for one process (and tests).
public actor InMemoryRegistrationStore: RegistrationStore {
    private var registrations: [String: ClientRegistration] = [:]

    /// An empty store.
    public init() {}

    public func registration(for issuer: String) -> ClientRegistration? { registrations[issuer] }

    public func save(_ registration: ClientRegistration) { registrations[registration.issuer] = registration }

    public func remove(for issuer: String) { registrations[issuer] = nil }

    private var locks = KeyedLocks<String>()

    /// Runs `body` while no other task holds the lock of `issuer` in this store.
    public func withRegistrationLock<T: Sendable>(for issuer: String, _ body: @Sendable () async throws -> T) async throws -> T {
        if !locks.take(issuer) {
            await withCheckedContinuation { locks.enqueue(issuer, $0) }
        }
        defer { locks.release(issuer) }
        return try await body()
    }
}

/// Registrations kept as files, one per issuer, in a directory only the user can enter (0700),
/// each file 0600 and replaced atomically: the conventions of ``FileKeychain``, beside which it
/// lives by default (`$XDG_STATE_HOME/oidc/registrations`). A file holds the registration's
/// secrets; nothing else shows them.
public struct FileRegistrationStore: RegistrationStore {
    /// The directory of the files (a path).
    public let directory: String

    /// A store in `directory`, or in `registrations` below ``FileKeychain/defaultDirectory(environment:)``.
    /// Nothing is created until a registration is saved.
    ///
    /// - Throws: what ``FileKeychain/defaultDirectory(environment:)`` throws when no directory is given.
    public init(directory: URL? = nil) throws(OIDCError) {
        if let directory {
            self.directory = directory.path
        } else {
            self.directory = try FileKeychain.defaultDirectory().appendingPathComponent("registrations", isDirectory: true).path
        }
    }

    public func registration(for issuer: String) async throws(OIDCError) -> ClientRegistration? {
        guard let bytes = try PrivateFile.read(Self.fileName(issuer), inPrivate: directory, description: "registrations directory", limit: 64 * 1024)
        else { return nil }
        let registration = try ClientRegistration(serialized: bytes)
        // A file renamed onto another issuer's name is not that issuer's registration.
        return registration.issuer == issuer ? registration : nil
    }

    public func save(_ registration: ClientRegistration) async throws(OIDCError) {
        try PrivateFile.write(
            registration.serialized(), named: Self.fileName(registration.issuer), inPrivate: directory, description: "registrations directory")
    }

    public func remove(for issuer: String) async throws(OIDCError) {
        guard let opened = try StoreDirectory.open(directory, "registrations directory") else { return }
        try opened.requirePrivate("registrations directory")
        _ = try opened.remove(Self.fileName(issuer))
    }

    /// Runs `body` holding the lock of `issuer` across processes and tasks: a lock file in the
    /// directory (0600), taken as ``FileKeychain/withLock(_:_:)`` takes its locks (released when
    /// `body` ends or the process dies; waited for at most 90 seconds).
    public func withRegistrationLock<T: Sendable>(for issuer: String, _ body: @Sendable () async throws -> T) async throws -> T {
        let locks = try FileKeychain(directory: URL(fileURLWithPath: directory, isDirectory: true))
        return try await locks.withLock(TokenStoreKey(service: "registration", hashingAccount: Secret(issuer)), body)
    }

    /// The issuer, encoded as ``FileKeychain`` encodes its keys: one name per issuer, whatever
    /// characters it has.
    static func fileName(_ issuer: String) -> String { PrivateFile.fileName(for: issuer) + ".json" }
}
