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
///   moment leaves the old or the new login, never a mix. A killed writer may leave a
///   `*.json.tmp-*` file behind (0600); a later save of the same key removes those older than ten
///   minutes, and nothing ever reads them as a login.
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

    private var directoryPath: String { directory.path }

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
        try preserveUnreadableFile(names, for: key, in: directory)
        removeStaleTemporaryFiles(names, in: directory)
        do { try directory.replace(names.data, with: bytes) } catch {
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
        guard try directory.remove(names.data) else { return }
        try directory.sync()
        logger.trace("login deleted", metadata: metadata(key))
    }

    /// Runs `body` while holding the exclusive lock of `key`, across processes and tasks.
    ///
    /// The lock is polled (1 ms, doubling to 20 ms) so that waiting never blocks a thread; it is
    /// released when `body` returns or throws, and by the kernel when the process dies, so a crashed
    /// holder never leaves a stale lock. Do not nest `withLock` for the same key: the inner call
    /// waits for the outer one and times out.
    ///
    /// The lock belongs to the directory it was taken in: when the directory's path names another
    /// directory by the time `body` calls ``load(_:)``, ``save(_:for:)`` or ``delete(_:)`` (it was
    /// renamed or replaced meanwhile), those calls fail with ``OIDCError/Code/storageFailure``
    /// rather than work on files the lock does not cover.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the lock is not free within ``lockTimeout``
    ///   or its file cannot be opened; `CancellationError` when the task is cancelled while waiting;
    ///   whatever `body` throws.
    public func withLock<T: Sendable>(_ key: TokenStoreKey, _ body: @Sendable () async throws -> T) async throws -> T {
        let names = try FileNames(key)
        let directory = try createDirectory()
        let asked = ContinuousClock.now
        let fd: Int32
        do { fd = try await acquireLock(names.lock, in: directory) } catch let error as OIDCError {
            logger.warning("could not take the store lock", metadata: metadata(key, ["wait_ms": .milliseconds(since: asked)]).merging(.failure(error)) { $1 })
            throw error
        }
        let waited = ContinuousClock.now - asked
        logger.log(
            level: waited > .milliseconds(5) ? .debug : .trace, "store lock taken",
            metadata: metadata(key, ["wait_ms": .stringConvertible(LogRedaction.milliseconds(waited))])
        )
        defer {
            KeychainIO.closeQuietly(fd)  // closing the only descriptor releases the lock
            logger.trace("store lock released", metadata: metadata(key))
        }
        var held = Self.lockedDirectories
        held[directoryPath] = directory.identity
        let result = try await Self.$lockedDirectories.withValue(held) { try await body() }
        // The directory stays open until here: its inode cannot be reused by another directory
        // that would then pass the identity check above while the lock is held.
        withExtendedLifetime(directory) {}
        return result
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

    // MARK: - Files

    /// The directories whose locks this task holds (by path), and which directory each lock is in.
    @TaskLocal private static var lockedDirectories: [String: FileIdentity] = [:]

    /// `service` and `account` of `key` (names, not secrets; 128 characters leave room for a
    /// hashed account, `sha256:` and 64 hex digits) and the store's directory.
    private func metadata(_ key: TokenStoreKey, _ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = extra
        metadata["service"] = .untrusted(key.service, limit: 128)
        metadata["account"] = .untrusted(key.account, limit: 128)
        metadata["directory"] = .untrusted(directoryPath, limit: 256)
        return metadata
    }

    /// Opens and checks the directory; `nil` when it does not exist.
    private func openDirectory() throws(OIDCError) -> StoreDirectory? {
        guard let directory = try StoreDirectory.open(directoryPath) else {
            // Gone while this task holds a lock in it: moved away, not "no login".
            if Self.lockedDirectories[directoryPath] != nil { throw replacedWhileLocked() }
            return nil
        }
        return try checked(directory)
    }

    private func replacedWhileLocked() -> OIDCError {
        OIDCError(
            .storageFailure,
            "The token store directory \(directoryPath) was replaced or moved away while this task held a lock in it: nothing was read or written; try again.",
            context: ["path": directoryPath])
    }

    /// Opens and checks the directory, creating it (0700, with missing parents) first when needed.
    private func createDirectory() throws(OIDCError) -> StoreDirectory {
        // Under a lock the directory exists: one that vanished is not created again.
        if Self.lockedDirectories[directoryPath] != nil, let directory = try openDirectory() { return directory }
        return try checked(StoreDirectory.create(directoryPath))
    }

    /// `directory`, once it is private to this user and is the one any lock this task holds is in.
    private func checked(_ directory: StoreDirectory) throws(OIDCError) -> StoreDirectory {
        let path = directoryPath
        try directory.requirePrivate("token store directory")
        if let locked = Self.lockedDirectories[path], locked != directory.identity { throw replacedWhileLocked() }
        return directory
    }

    /// The bytes of the data file (`nil` bytes when too large) and its identity, or `nil` when
    /// there is no file.
    private func readDataFile(_ name: String, in directory: StoreDirectory) throws(OIDCError) -> (bytes: [UInt8]?, identity: FileIdentity)? {
        let path = directory.path(name)
        // O_NONBLOCK: a FIFO put in the file's place must not hang the open.
        guard let fd = try directory.openFileIfPresent(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, "reading") else {
            return nil
        }
        defer { KeychainIO.closeQuietly(fd) }
        let info = try KeychainIO.status(of: fd, path)
        let context = ["path": path]
        guard KeychainIO.isRegularFile(info) else {
            throw OIDCError(.storageFailure, "\(path) is not a regular file: move it away.", context: context)
        }
        guard info.st_uid == KeychainIO.userID else {
            throw OIDCError(
                .storageFailure, "\(path) belongs to user id \(info.st_uid), not to you (\(KeychainIO.userID)): refusing to use it.",
                context: context)
        }
        let mode = KeychainIO.permissions(info)
        guard mode & 0o077 == 0 else {
            throw OIDCError(
                .storageFailure,
                "\(path) is readable or writable by other users (mode \(String(mode, radix: 8))): if it is yours, run `chmod 600 \(path)`; otherwise delete it and log in again.",
                context: context)
        }
        let bytes = try KeychainIO.readAll(fd, limit: Self.maximumFileSize, path)
        return (bytes, FileIdentity(info))
    }

    /// Moves the corrupt data file aside, if it still is the file that was read; returns where it
    /// went, or `nil` when another process replaced or moved it meanwhile.
    private func moveAside(
        _ names: FileNames, in directory: StoreDirectory, identity: FileIdentity, suffix: String = "corrupt"
    ) throws(OIDCError) -> String? {
        guard let current = try directory.linkStatus(names.data), FileIdentity(current) == identity else { return nil }
        let base = names.data + "." + suffix + "-" + KeychainIO.timestamp()
        for attempt in 0..<100 {
            let destination = attempt == 0 ? base : "\(base)-\(attempt)"
            guard try directory.linkStatus(destination) == nil else { continue }
            try directory.rename(names.data, to: destination)
            try directory.sync()
            return directory.path(destination)
        }
        throw OIDCError(
            .storageFailure, "Too many moved-aside copies of \(directory.path(names.data)): clean up the directory.",
            context: ["path": directory.path(names.data)])
    }

    /// Before a save: keeps an existing file that this store cannot read as a login (corrupt, or
    /// sealed with a key it does not have) by moving it aside.
    private func preserveUnreadableFile(_ names: FileNames, for key: TokenStoreKey, in directory: StoreDirectory) throws(OIDCError) {
        // A file that cannot be read (refused, unreadable) holds nothing to keep that we could see.
        guard let file = try? readDataFile(names.data, in: directory) else { return }
        guard let suffix = classifyReplaced(file.bytes, for: key, path: directory.path(names.data)).asideSuffix else { return }
        _ = try moveAside(names, in: directory, identity: file.identity, suffix: suffix)
    }

    /// Removes temporary files of this key left by writers that died long enough ago (best effort).
    private func removeStaleTemporaryFiles(_ names: FileNames, in directory: StoreDirectory) {
        let prefix = names.data + ".tmp-"
        guard let entries = try? directory.entries() else { return }
        for entry in entries where entry.hasPrefix(prefix) {
            guard let info = try? directory.linkStatus(entry), KeychainIO.isRegularFile(info),
                KeychainIO.isOlder(info, than: Self.staleTemporaryAge)
            else { continue }
            _ = try? directory.remove(entry)
        }
    }

    /// Opens the lock file `name` in `directory` and takes its exclusive lock; returns the
    /// descriptor that holds it. Taken only when `name` still names the locked file and the
    /// directory is still at its path afterwards, so two processes never hold locks on two files.
    private func acquireLock(_ name: String, in directory: StoreDirectory) async throws -> Int32 {
        let clock = ContinuousClock()
        let deadline = clock.now + lockTimeout
        // Another pass only when the lock file or the directory was replaced while we waited.
        for _ in 0..<10 {
            let fd = try openLockFile(name, in: directory)
            do {
                try await acquire(fd, directory.path(name), deadline: deadline)
                let locked = try KeychainIO.status(of: fd, directory.path(name))
                guard directory.isStillAtPath() else {
                    throw OIDCError(
                        .storageFailure,
                        "The token store directory \(directory.path) was replaced while waiting for its lock: try again.",
                        context: ["path": directory.path])
                }
                if let current = try directory.linkStatus(name), FileIdentity(current) == FileIdentity(locked) { return fd }
                KeychainIO.closeQuietly(fd)
            } catch {
                KeychainIO.closeQuietly(fd)
                throw error
            }
        }
        throw OIDCError(
            .storageFailure, "The lock file \(directory.path(name)) kept being replaced while it was locked: check what else uses the directory.",
            context: ["path": directory.path(name)])
    }

    private func openLockFile(_ name: String, in directory: StoreDirectory) throws(OIDCError) -> Int32 {
        let path = directory.path(name)
        let fd = try directory.openFile(name, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode: 0o600, "opening the lock file")
        do throws(OIDCError) {
            let info = try KeychainIO.status(of: fd, path)
            guard KeychainIO.isRegularFile(info), info.st_uid == KeychainIO.userID else {
                throw OIDCError(.storageFailure, "The lock file \(path) is not a regular file of yours: move it away.", context: ["path": path])
            }
            // Created with at most 0600; make it exactly that (it holds nothing but the lock).
            if KeychainIO.permissions(info) != 0o600, fchmod(fd, 0o600) != 0 {
                throw KeychainIO.failure(errno, "setting the permissions of", path)
            }
            return fd
        } catch {
            KeychainIO.closeQuietly(fd)
            throw error
        }
    }

    /// Takes the exclusive lock on `fd` by `deadline`, polling so that no thread ever blocks in `flock`.
    private func acquire(_ fd: Int32, _ path: String, deadline: ContinuousClock.Instant) async throws {
        try Task.checkCancellation()
        let clock = ContinuousClock()
        var delay = Duration.milliseconds(1)
        // Bounded by the deadline: every pass either returns, throws, or sleeps towards it.
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            let code = errno
            if code == EINTR, clock.now < deadline { continue }
            guard code == EWOULDBLOCK || code == EAGAIN || code == EINTR else {
                throw KeychainIO.failure(code, "locking", path)
            }
            let now = clock.now
            guard now < deadline else {
                throw OIDCError(
                    .storageFailure,
                    "The lock \(path) was held by another process (or task) for longer than \(lockTimeout): check for a hung oidc (fuser \(path)) and try again.",
                    context: ["path": path])
            }
            try await Task.sleep(for: min(delay, deadline - now))
            delay = min(delay * 2, .milliseconds(20))
        }
    }
}

/// Which file a path named at one moment: device and inode.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// The file names of one key.
///
/// Service and account are each percent-encoded byte by byte (UTF-8, after Unicode NFC
/// normalization, so that equal strings give one file) except `a-z 0-9 . _ -`, with upper-case hex
/// digits; upper-case letters are encoded too, so names differ even on a case-insensitive file
/// system. They are joined with `@`, which an encoded part never contains. A name therefore never
/// contains `/`, never is `.` or `..`, and decodes back to exactly one key.
struct FileNames {
    /// `<service>@<account>.json`
    let data: String
    /// `<service>@<account>.json.lock`
    let lock: String

    /// Longest encoded `<service>@<account>`, leaving room for suffixes within 255 bytes.
    static let maximumBaseLength = 200

    init(_ key: TokenStoreKey) throws(OIDCError) {
        let base = Self.encode(key.service) + "@" + Self.encode(key.account)
        guard base.utf8.count <= Self.maximumBaseLength else {
            throw .invalidArgument(
                "The store key's service and account are too long for a file name (\(base.utf8.count) bytes encoded, at most \(Self.maximumBaseLength)).")
        }
        data = base + ".json"
        lock = data + ".lock"
    }

    /// The key whose data file is `name`, or `nil` for any other file.
    static func key(fromDataFile name: String) -> TokenStoreKey? {
        guard name.hasSuffix(".json") else { return nil }
        let parts = name.dropLast(5).split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let service = decode(parts[0]), let account = decode(parts[1]) else { return nil }
        return TokenStoreKey(service: service, account: account)
    }

    private static func isLiteral(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        // NFC leaves ASCII as it is; skipping it spares the hot path of `oidc token` Unicode's tables.
        let canonical = text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCanonicalMapping
        for byte in canonical.utf8 {
            if isLiteral(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text `encode` turned into `encoded`, or `nil` when `encoded` is not exactly such an output.
    static func decode(_ encoded: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = encoded.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap({ hexDigits.firstIndex(of: $0) }),
                    let low = iterator.next().flatMap({ hexDigits.firstIndex(of: $0) })
                else { return nil }
                bytes.append(UInt8(high << 4 | low))
            } else if isLiteral(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self), encode(text) == encoded else { return nil }
        return text
    }
}
