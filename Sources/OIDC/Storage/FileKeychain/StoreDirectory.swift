#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// An open directory: every file operation of ``FileKeychain`` goes through one descriptor of it
/// (`openat`, `renameat`, `unlinkat`, `fstatat`), so a directory renamed or replaced while an
/// operation runs cannot split that operation across two directories: what was checked is where
/// the files are read, written and locked.
///
/// The descriptor is closed when the value is released.
final class StoreDirectory {
    /// The path it was opened by, for messages.
    let path: String
    /// Which directory it is (device and inode).
    let identity: FileIdentity
    private let fd: Int32
    private let info: stat

    private init(fd: Int32, path: String, info: stat) {
        self.fd = fd
        self.path = path
        self.info = info
        identity = FileIdentity(info)
    }

    deinit { KeychainIO.closeQuietly(fd) }

    /// Opens the directory at `path`, or returns `nil` when there is none. The path may go through
    /// symbolic links (a home directory often does); the directory itself is what gets checked.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when something else is at `path` or it cannot be
    ///   opened; a directory of another user that this user may not open is refused for being
    ///   theirs (what ``requirePrivate(_:)`` says once it is open), not with the bare `EACCES`.
    static func open(_ path: String, _ description: String = "directory") throws(OIDCError) -> StoreDirectory? {
        let (fd, error) = KeychainIO.retrying { KeychainIO.systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY, 0) }
        guard fd >= 0 else {
            if error == ENOENT { return nil }
            var info = stat()
            if error == EACCES, stat(path, &info) == 0, info.st_uid != KeychainIO.userID {
                throw Self.notYours(path, description, owner: info.st_uid)
            }
            if error == ENOTDIR {
                throw OIDCError(
                    .storageFailure, "\(path) exists but is not a directory: move it away or choose another directory.",
                    context: ["path": path])
            }
            throw KeychainIO.failure(error, "opening the directory", path)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            KeychainIO.closeQuietly(fd)
            throw KeychainIO.failure(code, "examining the directory", path)
        }
        return StoreDirectory(fd: fd, path: path, info: info)
    }

    /// Opens the directory at `path`, creating it and its missing parents (0700) first when needed.
    static func create(_ path: String, _ description: String = "directory") throws(OIDCError) -> StoreDirectory {
        if let directory = try open(path, description) { return directory }
        try KeychainIO.makeDirectories(path)
        guard let directory = try open(path, description) else { throw KeychainIO.failure(ENOENT, "opening the directory", path) }
        return directory
    }

    /// Refuses a directory that is not the effective user's, or that other users may enter.
    func requirePrivate(_ description: String) throws(OIDCError) {
        let context = ["path": path]
        guard info.st_uid == KeychainIO.userID else { throw Self.notYours(path, description, owner: info.st_uid) }
        let mode = KeychainIO.permissions(info)
        guard mode & 0o077 == 0 else {
            throw OIDCError(
                .storageFailure,
                "The \(description) \(path) is open to other users (mode \(String(mode, radix: 8))): run `chmod 700 \(path)` or choose another directory.",
                context: context)
        }
    }

    /// The refusal of a directory that belongs to another user.
    private static func notYours(_ path: String, _ description: String, owner: uid_t) -> OIDCError {
        OIDCError(
            .storageFailure, "The \(description) \(path) belongs to user id \(owner), not to you (\(KeychainIO.userID)): use your own directory.",
            context: ["path": path])
    }

    /// Whether `path` still names this directory.
    func isStillAtPath() -> Bool {
        var current = stat()
        return stat(path, &current) == 0 && FileIdentity(current) == identity
    }

    /// The full path of `name` in this directory, for messages.
    func path(_ name: String) -> String { path + "/" + name }

    // MARK: - Files, by name in this directory

    /// `openat(2)`; the descriptor is the caller's to close.
    func openFile(_ name: String, _ flags: Int32, mode: mode_t = 0, _ action: String) throws(OIDCError) -> Int32 {
        guard let fd = try openFileIfPresent(name, flags, mode: mode, action) else {
            throw KeychainIO.failure(ENOENT, action, path(name))
        }
        return fd
    }

    /// `openat(2)`, or `nil` when nothing is at `name`.
    func openFileIfPresent(_ name: String, _ flags: Int32, mode: mode_t = 0, _ action: String) throws(OIDCError) -> Int32? {
        let (opened, error) = KeychainIO.retrying { openat(fd, name, flags, mode) }
        if opened >= 0 { return opened }
        if error == ENOENT { return nil }
        throw KeychainIO.failure(error, action, path(name))
    }

    /// `fstatat(2)` without following a link, or `nil` when nothing is at `name`.
    func linkStatus(_ name: String) throws(OIDCError) -> stat? {
        var info = stat()
        if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return info }
        let code = errno
        if code == ENOENT { return nil }
        throw KeychainIO.failure(code, "examining", path(name))
    }

    /// `renameat(2)` within this directory.
    func rename(_ from: String, to: String) throws(OIDCError) {
        if renameat(fd, from, fd, to) != 0 { throw KeychainIO.failure(errno, "replacing", path(to)) }
    }

    /// `unlinkat(2)`; `false` when there was nothing to remove.
    @discardableResult
    func remove(_ name: String) throws(OIDCError) -> Bool {
        if unlinkat(fd, name, 0) == 0 { return true }
        let code = errno
        if code == ENOENT { return false }
        throw KeychainIO.failure(code, "removing", path(name))
    }

    /// Makes renames and removals in this directory durable (`fsync` of the directory).
    func sync() throws(OIDCError) {
        let (_, error) = KeychainIO.retrying { fsync(fd) }
        // Some file systems cannot sync a directory; their renames are as durable as they get.
        if error != 0, error != EINVAL, error != ENOTSUP { throw KeychainIO.failure(error, "flushing to disk", path) }
    }

    /// The names in this directory (without `.` and `..`), at most `limit` of them.
    func entries(limit: Int = 100_000) throws(OIDCError) -> [String] {
        // fdopendir takes over a descriptor of its own, so the directory's stays ours.
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw KeychainIO.failure(errno, "listing", path) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            KeychainIO.closeQuietly(copy)
            throw KeychainIO.failure(code, "listing", path)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while names.count < limit, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Replaces `name` atomically with `bytes`, mode 0600 from creation: a temporary file beside it,
    /// written, fsynced, renamed over `name`, then the directory fsynced. A crash at any moment
    /// leaves the old or the new content, never a mix.
    func replace(_ name: String, with bytes: [UInt8]) throws(OIDCError) {
        // The writer's process id in the name: a reader adopts a complete temporary file only once
        // its writer is gone (FileKeychain+Adoption.swift).
        let temporary = name + ".tmp-" + String(getpid()) + "-" + KeychainIO.randomSuffix()
        let temporaryPath = path(temporary)
        let file = try openFile(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode: 0o600, "creating a temporary file")
        var isOpen = true
        var renamed = false
        defer {
            if isOpen { KeychainIO.closeQuietly(file) }
            if !renamed { _ = unlinkat(fd, temporary, 0) }
        }
        // The umask may have taken bits away (never added any): make it exactly 0600.
        guard fchmod(file, 0o600) == 0 else { throw KeychainIO.failure(errno, "setting the permissions of", temporaryPath) }
        try KeychainIO.writeAll(file, bytes, temporaryPath)
        try KeychainIO.sync(file, temporaryPath)
        isOpen = false
        try KeychainIO.close(file, temporaryPath)
        try rename(temporary, to: name)
        renamed = true
        try sync()
    }
}
