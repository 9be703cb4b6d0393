#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Small private files beside the token store, such as the `oidc` command's profiles: written the
/// way ``FileKeychain`` writes logins (directory 0700, file 0600 from creation, atomic replace).
package enum PrivateFile {
    /// Replaces `name` in `directory` atomically with `bytes`, creating the directory (0700) first.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path and what failed.
    package static func write(_ bytes: [UInt8], named name: String, in directory: String) throws(OIDCError) {
        try StoreDirectory.create(directory).replace(name, with: bytes)
    }

    /// Replaces `name` in `directory` atomically with `bytes`, like ``write(_:named:in:)``, after
    /// refusing a directory that is not the user's or that other users may enter, as
    /// ``FileKeychain`` refuses its own: anyone who can write there can rename or swap the files,
    /// and a swapped file of the user's passes every check of the file itself.
    ///
    /// - Parameter description: what the directory is, for the message ("profiles directory").
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path and what to do (`chmod 700`).
    package static func write(_ bytes: [UInt8], named name: String, inPrivate directory: String, description: String) throws(OIDCError) {
        let opened = try StoreDirectory.create(directory, description)
        try opened.requirePrivate(description)
        try opened.replace(name, with: bytes)
    }

    /// The contents of `name` in `directory`, read like ``read(_:limit:)`` through the directory's
    /// own descriptor once it has been checked as ``write(_:named:inPrivate:description:)`` checks
    /// it: `nil` when there is no directory or no file.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the directory is not the user's or others
    ///   may enter it, and as ``read(_:limit:)``.
    package static func read(_ name: String, inPrivate directory: String, description: String, limit: Int) throws(OIDCError) -> [UInt8]? {
        guard let opened = try StoreDirectory.open(directory, description) else { return nil }
        try opened.requirePrivate(description)
        let path = opened.path(name)
        guard let fd = try opened.openFileIfPresent(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, "reading") else {
            return nil
        }
        return try read(fd, path, limit: limit) { info throws(OIDCError) in try requireUserFile(info, path) }
    }

    /// The names in `directory` (checked as ``read(_:inPrivate:description:limit:)`` checks it), at
    /// most `limit` of them; none when there is no directory.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the directory is refused or cannot be listed.
    package static func names(inPrivate directory: String, description: String, limit: Int = 10_000) throws(OIDCError) -> [String] {
        guard let opened = try StoreDirectory.open(directory, description) else { return [] }
        try opened.requirePrivate(description)
        return try opened.entries(limit: limit)
    }

    /// The contents of the file at `path`, read through one descriptor opened without following a
    /// link, so what is checked is what is read: `nil` when there is no file. At most `limit` bytes.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path when it is a link or not a regular
    ///   file, belongs to another user, is writable by others, or cannot be read;
    ///   ``OIDCError/Code/corruptStore`` when it is over `limit`.
    package static func read(_ path: String, limit: Int) throws(OIDCError) -> [UInt8]? {
        try read(path, limit: limit) { info throws(OIDCError) in try requireUserFile(info, path) }
    }

    /// A regular file of the user's that no one else can write.
    private static func requireUserFile(_ info: stat, _ path: String) throws(OIDCError) {
        guard KeychainIO.isRegularFile(info), info.st_uid == KeychainIO.userID, KeychainIO.permissions(info) & 0o022 == 0 else {
            throw OIDCError(
                .storageFailure,
                "\(path) is refused: it must be a regular file (not a link) of yours that no one else can write (chmod 600).",
                context: ["path": path]
            )
        }
    }

    /// The contents of a file holding a secret (a key), read like ``read(_:limit:)``, but refused
    /// also when group or others may read it, as `ssh` refuses private keys: a secret others can
    /// read is no longer one. Root's files are accepted too (keys provisioned by an administrator).
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path when it is a link or not a regular
    ///   file, belongs to another user than you or root, has any group or other permission bit (the
    ///   message says to `chmod 600`), or cannot be read; ``OIDCError/Code/corruptStore`` when it is
    ///   over `limit`.
    package static func readSecret(_ path: String, limit: Int) throws(OIDCError) -> [UInt8]? {
        try read(path, limit: limit) { info throws(OIDCError) in
            let context = ["path": path]
            guard KeychainIO.isRegularFile(info) else {
                throw OIDCError(.storageFailure, "\(path) is refused: it must be a regular file, not a link or anything else.", context: context)
            }
            guard info.st_uid == KeychainIO.userID || info.st_uid == 0 else {
                throw OIDCError(
                    .storageFailure, "\(path) belongs to user id \(info.st_uid), neither you (\(KeychainIO.userID)) nor root: refusing to use it.",
                    context: context)
            }
            let mode = KeychainIO.permissions(info)
            guard mode & 0o077 == 0 else {
                throw OIDCError(
                    .storageFailure,
                    "\(path) is accessible to other users (mode \(String(mode, radix: 8))): a secret must be readable by its owner only; run `chmod 600 \(path)`.",
                    context: context)
            }
        }
    }

    /// Opens `path` without following a link, lets `check` refuse what `fstat` says of the
    /// descriptor, then reads at most `limit` bytes from that same descriptor.
    private static func read(_ path: String, limit: Int, check: (stat) throws(OIDCError) -> Void) throws(OIDCError) -> [UInt8]? {
        // O_NONBLOCK and O_NOCTTY: a FIFO or a terminal put in the file's place is opened harmlessly, then refused.
        guard let fd = try KeychainIO.openIfPresent(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, "reading") else {
            return nil
        }
        return try read(fd, path, limit: limit, check: check)
    }

    /// Lets `check` refuse what `fstat` says of `fd`, then reads at most `limit` bytes from it; closes it.
    private static func read(_ fd: Int32, _ path: String, limit: Int, check: (stat) throws(OIDCError) -> Void) throws(OIDCError) -> [UInt8] {
        defer { KeychainIO.closeQuietly(fd) }
        try check(try KeychainIO.status(of: fd, path))
        guard let bytes = try KeychainIO.readAll(fd, limit: limit, path) else {
            throw OIDCError(.corruptStore, "\(path) is over \(limit) bytes: it is not what it should be; remove it.", context: ["path": path])
        }
        return bytes
    }

    /// The percent-encoded file-name form of `text` that ``FileKeychain`` uses: never contains `/`,
    /// never `.` or `..`, and different texts give different names.
    package static func fileName(for text: String) -> String { FileNames.encode(text) }
}
