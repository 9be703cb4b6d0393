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

    /// The contents of the file at `path`, read through one descriptor opened without following a
    /// link, so what is checked is what is read: `nil` when there is no file. At most `limit` bytes.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path when it is a link or not a regular
    ///   file, belongs to another user, is writable by others, or cannot be read;
    ///   ``OIDCError/Code/corruptStore`` when it is over `limit`.
    package static func read(_ path: String, limit: Int) throws(OIDCError) -> [UInt8]? {
        try read(path, limit: limit) { info throws(OIDCError) in
            guard KeychainIO.isRegularFile(info), info.st_uid == KeychainIO.userID, KeychainIO.permissions(info) & 0o022 == 0 else {
                throw OIDCError(
                    .storageFailure,
                    "\(path) is refused: it must be a regular file (not a link) of yours that no one else can write (chmod 600).",
                    context: ["path": path]
                )
            }
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
