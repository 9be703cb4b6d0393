public import Foundation
public import Logging

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A ``TokenStore`` in files: the keychain substitute for Linux and servers.
///
/// Each login is one JSON file, named after its key's service and account, in a directory that
/// only you can enter. By default that is `$XDG_STATE_HOME/oidc`, or `~/.local/state/oidc`.
///
/// ```swift
/// let store = try FileKeychain()
/// try await store.withLock(.schibsted(clientID: clientID)) {
///     let login = try await store.load(.schibsted(clientID: clientID))
///     // refresh, then save: no other process can do the same meanwhile
/// }
/// ```
///
/// Guarantees:
/// - **Permissions.** The directory is created with mode 0700 (missing parents too, as XDG asks),
///   files with 0600, whatever the umask; there is no moment with wider permissions. An existing
///   directory that other users can enter, or that is not yours, is refused rather than changed:
///   fix it yourself (`chmod 700`). A data file that other users can read, that is not yours, that is
///   not a regular file, or that is a symbolic link is refused too; nothing is fixed silently.
/// - **Atomicity.** ``save(_:for:)`` writes a temporary file in the same directory, flushes it
///   (`fsync`), renames it over the old one and flushes the directory: a crash or a kill at any
///   moment leaves the old or the new login, never a mix. A writer killed after its temporary
///   file was complete, before the rename, loses nothing: the next ``load(_:)`` adopts a
///   `*.json.tmp-*` file newer than the login that reads as this key's login (it parses, and a
///   sealed one opens), once its writer (whose process id its name carries) is gone and no
///   other writer holds the key's lock. Incomplete ones are never read as a login; a later save
///   of the key removes those older than ten minutes.
/// - **Room before a refresh.** ``reserveSpace(toReplace:for:)`` writes and flushes the space a
///   refresh's answer will take before the refresh is sent, so that a full disk stops a refresh
///   that would spend a rotating refresh token the store could not then keep.
/// - **Corruption.** A file that is not a stored login (bad JSON, missing members), or an encrypted
///   one that fails authentication, is moved aside to `<name>.json.corrupt-<UTC time>`, never
///   deleted or overwritten, and ``load(_:)`` reports ``OIDCError/Code/corruptStore`` naming both
///   paths. A save over such a file moves it aside too. A login of a newer format version is
///   refused by ``load(_:)`` and left in place.
/// - **Encryption at rest (optional).** Given a ``TokenEncryption`` ring, ``save(_:for:)`` writes
///   each login sealed with AES-256-GCM under the ring's current key, bound to its key (service and
///   account): the file holds no token text. ``load(_:)`` opens files sealed with any key of the
///   ring, and still reads plain files, so that an existing store migrates: each login is written
///   sealed at its next save (a refresh, a login). A sealed file whose key id is not in the ring,
///   or read by a store without encryption, is a ``OIDCError/Code/storageFailure`` naming the key
///   id to configure, and stays where it is; a save over it moves it aside to
///   `<name>.json.sealed-<UTC time>` (it cannot be told from a stale login, and is kept for when
///   the key is back). Encryption protects copies of the files (backups, snapshots, a lost disk),
///   not the tokens from a process of the same user, which can read the key too; and since plain
///   files are read, it does not prove who wrote a file.
/// - **Locking.** ``withLock(_:_:)`` takes an exclusive `flock(2)` on `<name>.json.lock`, excluding
///   other processes and other tasks of this process. It is advisory: only code that takes the lock
///   is excluded. It is reliable on local file systems; on NFS, Linux emulates `flock` with POSIX
///   locks and it works only when the server supports them. ``load(_:)``, ``save(_:for:)`` and
///   ``delete(_:)`` do not take the lock, so call them freely inside `withLock`. Lock files are kept
///   (removing one while another process waits on it would break the exclusion).
/// - **One directory.** Each call opens the directory once and reaches every file through that
///   descriptor (`openat`, `renameat`, `unlinkat`), so a directory renamed or replaced meanwhile
///   cannot split a call, or a lock and the calls made under it, between two directories.
///
/// File operations are short blocking system calls made on the calling thread. `FileKeychain` is a
/// value with immutable configuration; copies share the files, not any state.
public struct FileKeychain: TokenStore {
    /// The store's directory.
    public let directory: URL
    /// How long ``withLock(_:_:)`` waits for another holder before failing.
    public let lockTimeout: Duration
    /// The keys that seal saved logins and open sealed ones; `nil` for plain files.
    public let encryption: TokenEncryption?
    /// Where reads, writes and lock waits are logged (`trace`/`debug`), and a corrupt file moved
    /// aside or a lock that timed out (`warning`); label `oidc.store` by convention. Paths and key
    /// names are logged, never a login's contents. Discards everything unless one was given.
    public var logger: Logger
    /// For tests of the `oidc` command: every write fails as on a full disk (`ENOSPC`).
    package var simulatedFullDisk = false
    /// Where ``save(_:for:)`` records the readable login each save replaces (`oidc login` revokes
    /// its refresh token); `nil` records nothing.
    package var replacedLogins: ReplacedLogins?

    var directoryPath: String { directory.path }

    /// The largest file ``load(_:)`` reads; anything larger is not a login.
    static let maximumFileSize = 4 * 1024 * 1024
    /// Temporary files older than this (seconds) were left by a writer that died.
    static let staleTemporaryAge = 600

    /// A store in `directory`, or in ``defaultDirectory(environment:)``. Nothing is created until
    /// the first write or lock.
    ///
    /// - Parameters:
    ///   - directory: Where the files are; `nil` for ``defaultDirectory(environment:)``.
    ///   - lockTimeout: How long ``withLock(_:_:)`` waits for another holder.
    ///   - encryption: Keys to seal logins with at rest (AES-256-GCM); `nil` writes plain JSON.
    ///     Plain files are read either way (see "Encryption at rest" above).
    ///   - logger: where reads, writes and lock waits are logged; `nil` (the default) logs nothing.
    /// - Throws: ``OIDCError/Code/invalidArgument`` when `directory` is not a file URL, or is `nil`
    ///   and neither `XDG_STATE_HOME` nor `HOME` is an absolute path; or `lockTimeout` is negative.
    public init(
        directory: URL? = nil, lockTimeout: Duration = .seconds(90), encryption: TokenEncryption? = nil, logger: Logger? = nil
    ) throws(OIDCError) {
        self.logger = logger ?? OIDCLog.store
        let chosen: URL
        if let directory { chosen = directory } else { chosen = try Self.defaultDirectory(environment: Self.processEnvironment()) }
        guard chosen.isFileURL else {
            throw .invalidArgument("The token store directory must be a file path, not \(chosen.absoluteString).")
        }
        guard lockTimeout >= .zero else { throw .invalidArgument("The lock timeout must not be negative.") }
        self.directory = chosen.standardizedFileURL
        self.lockTimeout = lockTimeout
        self.encryption = encryption
    }

    /// The two variables ``defaultDirectory(environment:)`` reads, without copying the whole
    /// environment (`oidc token` runs this on every call).
    private static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in ["XDG_STATE_HOME", "HOME"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// `$XDG_STATE_HOME/oidc` when that variable is an absolute path, else `$HOME/.local/state/oidc`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when neither is set to an absolute path: pass a
    ///   directory to ``init(directory:lockTimeout:encryption:logger:)`` then.
    public static func defaultDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OIDCError) -> URL {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent("oidc", isDirectory: true)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".local/state/oidc", isDirectory: true)
        }
        throw .invalidArgument(
            "Neither XDG_STATE_HOME nor HOME is an absolute path, so there is no default token store directory: set one, or choose a directory."
        )
    }

    // MARK: - TokenStore

    /// The login kept under `key`, or `nil` when there is none (or no directory yet).
    ///
    /// - Throws: ``OIDCError/Code/corruptStore`` when the file is not a stored login, or is sealed
    ///   and fails authentication (changed, copied from another key's file, or sealed by another key
    ///   with the same id): it has been moved aside, and the context's `path` and `movedTo` say from
    ///   where to where. ``OIDCError/Code/storageFailure`` when the file or directory cannot be read,
    ///   or is refused (a symbolic link, not a regular file, not yours, readable by other users);
    ///   when the login has a newer format version; when the file is sealed and no encryption is
    ///   configured, or its key id (context `kid`) is not in the ring: these stay in place.
    public func load(_ key: TokenStoreKey) throws(OIDCError) -> StoredLogin? {
        let names = try FileNames(key)
        guard let directory = try openDirectory() else { return nil }
        let path = directory.path(names.data)
        adoptCompleteTemporaryFile(names, for: key, in: directory)
        // A second pass only when another process replaced the corrupt file while we looked at it.
        for _ in 0..<3 {
            guard let file = try readDataFile(names.data, in: directory) else { return nil }
            let login: StoredLogin
            do throws(OIDCError) {
                guard let bytes = file.bytes else {
                    throw OIDCError(.corruptStore, "The stored login at \(path) is unreadable: larger than \(Self.maximumFileSize) bytes.")
                }
                login = try decode(bytes, for: key, path: path)
                logger.trace("login read", metadata: metadata(key))
            } catch {
                // A login written by a newer version, or sealed with a key this store lacks, is not
                // corrupt: leave it for whoever can read it.
                guard error.code == .corruptStore else {
                    logger.warning("stored login unreadable; left in place", metadata: metadata(key, ["path": .untrusted(path, limit: 256)]).merging(.failure(error)) { $1 })
                    throw error
                }
                guard let destination = try moveAside(names, in: directory, identity: file.identity) else { continue }
                logger.warning("corrupt stored login moved aside", metadata: metadata(key, ["path": .untrusted(path, limit: 256), "moved_to": .untrusted(destination, limit: 256)]))
                throw OIDCError(
                    .corruptStore,
                    "\(error.message) It was moved aside to \(destination) (kept for you to inspect or delete); log in again.",
                    context: ["path": path, "movedTo": destination]
                )
            }
            return login
        }
        throw OIDCError(.storageFailure, "The stored login at \(path) kept changing while it was read; try again.", context: ["path": path])
    }

    /// Replaces the login under `key`, atomically: a reader, a crash or a kill sees the old or the
    /// new login, never a mix. Creates the directory (0700) when missing; the file is 0600. With
    /// ``encryption``, the file is sealed with its current key.
    ///
    /// An existing file that this store cannot read as a login is moved aside first, never
    /// overwritten: `.corrupt-<time>` when it is corrupt, `.sealed-<time>` when it is sealed with a
    /// key this store does not have.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` for permission problems, a full disk, a read-only
    ///   file system or a refused directory, naming the path; the old login is then unchanged.
    ///   ``OIDCError/Code/invalidArgument`` when the key is too long for a file name.
    ///   ``OIDCError/Code/randomFailure`` or ``OIDCError/Code/cryptoFailure`` when sealing fails.
    public func save(_ login: StoredLogin, for key: TokenStoreKey) throws(OIDCError) {
        let names = try FileNames(key)
        let bytes = try encode(login, for: key)
        let directory = try createDirectory()
        if let replacedLogins, let file = try? readDataFile(names.data, in: directory), let bytes = file.bytes,
            let old = try? decode(bytes, for: key, path: directory.path(names.data))
        {
            replacedLogins.record(old, key: key)
        }
        try preserveUnreadableFile(names, for: key, in: directory)
        removeStaleTemporaryFiles(names, in: directory)
        // The room held before a refresh is what this write goes into.
        releaseReservation(names, in: directory)
        do throws(OIDCError) {
            if simulatedFullDisk { throw KeychainIO.failure(ENOSPC, "writing", directory.path(names.data)) }
            try directory.replace(names.data, with: bytes)
        } catch {
            logger.warning("saving the login failed; the old one is unchanged", metadata: metadata(key).merging(.failure(error)) { $1 })
            throw error
        }
        logger.trace("login saved", metadata: metadata(key, ["sealed": .bool(encryption != nil)]))
    }

    /// Removes the login under `key`; nothing happens when there is none. The lock file stays.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the file cannot be removed.
    public func delete(_ key: TokenStoreKey) throws(OIDCError) {
        let names = try FileNames(key)
        guard let directory = try openDirectory() else { return }
        releaseReservation(names, in: directory)
        guard try directory.remove(names.data) else { return }
        try directory.sync()
        logger.trace("login deleted", metadata: metadata(key))
    }

    /// Every key with a stored login, sorted; lock, temporary and moved-aside files are not logins.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the directory cannot be read or is refused.
    public func keys() throws(OIDCError) -> [TokenStoreKey] {
        guard let directory = try openDirectory() else { return [] }
        return try directory.entries().compactMap(FileNames.key(fromDataFile:)).sorted {
            ($0.service, $0.account) < ($1.service, $1.account)
        }
    }

    /// `service` and `account` of `key` (names, not secrets; 128 characters leave room for a
    /// hashed account, `sha256:` and 64 hex digits) and the store's directory.
    func metadata(_ key: TokenStoreKey, _ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = extra
        metadata["service"] = .untrusted(key.service, limit: 128)
        metadata["account"] = .untrusted(key.account, limit: 128)
        metadata["directory"] = .untrusted(directoryPath, limit: 256)
        return metadata
    }
}
