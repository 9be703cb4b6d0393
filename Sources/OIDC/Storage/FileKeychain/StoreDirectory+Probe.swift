#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Whether a directory takes files, asked before anything depends on it: `oidc login` asks before
/// the browser opens, so that nobody signs in for tokens that could not be kept.
extension StoreDirectory {
    /// The room a probe proves: more than a login file takes (a few KiB; tokens, an ID token).
    static let probeSize = 64 * 1024

    /// Creates a file beside the others (0600, a name nothing reads), writes ``probeSize`` bytes
    /// into it and flushes them, then removes it: a read-only directory, and a full disk or a
    /// used-up quota, are found before a login is fetched that could not be kept.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path, when it cannot be created, filled or removed.
    func probeWritable() throws(OIDCError) {
        let name = ".write-probe-" + KeychainIO.randomSuffix()
        let file = try openFile(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode: 0o600, "creating a file in")
        KeychainIO.closeQuietly(file)
        do throws(OIDCError) {
            try fill(name, size: Self.probeSize)
        } catch {
            _ = try? remove(name)
            throw error
        }
        try remove(name)
    }
}

extension FileKeychain {
    /// Checks that the store can keep a login: its directory exists or can be created (0700), is
    /// private to this user, and takes a new file with room in it (a full disk is found here).
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path and what failed.
    package func requireWritable() throws(OIDCError) {
        let directory = try createDirectory()
        if simulatedFullDisk { throw KeychainIO.failure(ENOSPC, "creating a file in", directoryPath) }
        try directory.probeWritable()
    }
}

extension PrivateFile {
    /// Checks that `directory` can take files as ``write(_:named:inPrivate:description:)`` writes
    /// them: created (0700) when missing, the user's alone, and writable.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path and what failed.
    package static func requireWritable(inPrivate directory: String, description: String) throws(OIDCError) {
        let opened = try StoreDirectory.create(directory, description)
        try opened.requirePrivate(description)
        try opened.probeWritable()
    }
}
