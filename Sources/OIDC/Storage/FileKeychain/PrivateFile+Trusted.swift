#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

extension PrivateFile {
    /// The contents of a file that decides whom to trust (a certificate authority file): public, so
    /// anyone may read it, but no one else may have chosen what it says. A regular file of yours or
    /// root's that group and others cannot write; a symbolic link is followed, and then it is its
    /// final target that must be such a file, and the link itself yours or root's (the system's
    /// `/etc/ssl/certs/*.pem` are root's links to root's files). At most `limit` bytes.
    ///
    /// The target is checked with `fstat` on the descriptor that is read, so what is checked is what
    /// is read, however the path changes meanwhile.
    ///
    /// - Returns: `nil` when nothing is at `path` (or a link leads nowhere).
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path when it (or its target) is not a
    ///   regular file, belongs to another user than you or root, or is writable by group or others
    ///   (the message says to `chmod go-w`), or cannot be read; ``OIDCError/Code/corruptStore`` when
    ///   it is over `limit`.
    package static func readTrusted(_ path: String, limit: Int) throws(OIDCError) -> [UInt8]? {
        let context = ["path": path]
        var link = stat()
        guard lstat(path, &link) == 0 else {
            if errno == ENOENT { return nil }
            throw KeychainIO.failure(errno, "examining", path)
        }
        let isLink = (link.st_mode & S_IFMT) == S_IFLNK
        if isLink, link.st_uid != KeychainIO.userID, link.st_uid != 0 {
            throw OIDCError(
                .storageFailure,
                "\(path) is a symbolic link of user id \(link.st_uid), neither you (\(KeychainIO.userID)) nor root: refusing to follow it; give the file itself.",
                context: context)
        }
        // Follows a link: the descriptor is the final target's, and that is what is checked and read.
        // O_NONBLOCK and O_NOCTTY: a FIFO or a terminal in the file's place is opened harmlessly, then refused.
        guard let fd = try KeychainIO.openIfPresent(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, "reading") else { return nil }
        defer { KeychainIO.closeQuietly(fd) }
        let info = try KeychainIO.status(of: fd, path)
        let named = isLink ? "\(path) (a link to \(Self.target(of: path)))" : path
        guard KeychainIO.isRegularFile(info) else {
            throw OIDCError(.storageFailure, "\(named) is not a regular file.", context: context)
        }
        guard info.st_uid == KeychainIO.userID || info.st_uid == 0 else {
            throw OIDCError(
                .storageFailure,
                "\(named) belongs to user id \(info.st_uid), neither you (\(KeychainIO.userID)) nor root: its owner chooses whom you trust. Copy it to a file of your own (cp, then chmod go-w) and give that.",
                context: context)
        }
        let mode = KeychainIO.permissions(info)
        guard mode & 0o022 == 0 else {
            let file = isLink ? Self.target(of: path) : path
            throw OIDCError(
                .storageFailure,
                "\(named) is writable by other users (mode \(String(mode, radix: 8))): whoever can change it chooses whom you trust. Run `chmod go-w \(file)`.",
                context: context)
        }
        guard let bytes = try KeychainIO.readAll(fd, limit: limit, path) else {
            throw OIDCError(.corruptStore, "\(path) is over \(limit) bytes.", context: context)
        }
        return bytes
    }

    /// Where the links at `path` lead, for a message; `path` itself when that cannot be told.
    private static func target(of path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
