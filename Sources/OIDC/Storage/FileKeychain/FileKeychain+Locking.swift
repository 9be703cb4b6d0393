internal import Foundation
internal import Logging

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The lock of a key, and the directory every call under it is held to.
extension FileKeychain {
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
        let heldLocks = Self.heldLocks.union([directory.path(names.lock)])
        let result = try await Self.$lockedDirectories.withValue(held) { try await Self.$heldLocks.withValue(heldLocks) { try await body() } }
        // The directory stays open until here: its inode cannot be reused by another directory
        // that would then pass the identity check above while the lock is held.
        withExtendedLifetime(directory) {}
        return result
    }

    /// The directories whose locks this task holds (by path), and which directory each lock is in.
    @TaskLocal static var lockedDirectories: [String: FileIdentity] = [:]

    /// The paths of the lock files this task holds.
    @TaskLocal static var heldLocks: Set<String> = []

    /// Opens and checks the directory; `nil` when it does not exist.
    func openDirectory() throws(OIDCError) -> StoreDirectory? {
        guard let directory = try StoreDirectory.open(directoryPath, "token store directory") else {
            // Gone while this task holds a lock in it: moved away, not "no login".
            if Self.lockedDirectories[directoryPath] != nil { throw replacedWhileLocked() }
            return nil
        }
        return try checked(directory)
    }

    func replacedWhileLocked() -> OIDCError {
        OIDCError(
            .storageFailure,
            "The token store directory \(directoryPath) was replaced or moved away while this task held a lock in it: nothing was read or written; try again.",
            context: ["path": directoryPath])
    }

    /// Opens and checks the directory, creating it (0700, with missing parents) first when needed.
    func createDirectory() throws(OIDCError) -> StoreDirectory {
        // Under a lock the directory exists: one that vanished is not created again.
        if Self.lockedDirectories[directoryPath] != nil, let directory = try openDirectory() { return directory }
        return try checked(StoreDirectory.create(directoryPath, "token store directory"))
    }

    /// `directory`, once it is private to this user and is the one any lock this task holds is in.
    func checked(_ directory: StoreDirectory) throws(OIDCError) -> StoreDirectory {
        let path = directoryPath
        try directory.requirePrivate("token store directory")
        if let locked = Self.lockedDirectories[path], locked != directory.identity { throw replacedWhileLocked() }
        return directory
    }

    /// The bytes of the data file (`nil` bytes when too large) and its identity, or `nil` when

    /// Opens the lock file `name` in `directory` and takes its exclusive lock; returns the
    /// descriptor that holds it. Taken only when `name` still names the locked file and the
    /// directory is still at its path afterwards, so two processes never hold locks on two files.
    func acquireLock(_ name: String, in directory: StoreDirectory) async throws -> Int32 {
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

    func openLockFile(_ name: String, in directory: StoreDirectory) throws(OIDCError) -> Int32 {
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
    func acquire(_ fd: Int32, _ path: String, deadline: ContinuousClock.Instant) async throws {
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

extension FileKeychain {
    /// Whether `key`'s lock file exists: someone has taken (or is taking) its lock. A caller with
    /// nothing to do for a key that has neither a login nor a lock file need not create one
    /// (``withLock(_:_:)`` keeps lock files).
    package func hasLockFile(_ key: TokenStoreKey) -> Bool {
        guard let names = try? FileNames(key) else { return false }
        return FileManager.default.fileExists(atPath: directory.appendingPathComponent(names.lock).path)
    }
}
