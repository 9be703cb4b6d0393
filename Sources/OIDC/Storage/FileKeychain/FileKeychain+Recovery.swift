internal import Foundation
internal import Logging

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Reading a data file, and keeping files this store cannot read instead of overwriting them.
extension FileKeychain {
    /// The bytes of the data file (`nil` bytes when too large) and its identity, or `nil` when
    /// there is no file.
    func readDataFile(_ name: String, in directory: StoreDirectory) throws(OIDCError) -> (bytes: [UInt8]?, identity: FileIdentity)? {
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
    func moveAside(
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
    func preserveUnreadableFile(_ names: FileNames, for key: TokenStoreKey, in directory: StoreDirectory) throws(OIDCError) {
        // A file that cannot be read (refused, unreadable) holds nothing to keep that we could see.
        guard let file = try? readDataFile(names.data, in: directory) else { return }
        guard let suffix = classifyReplaced(file.bytes, for: key, path: directory.path(names.data)).asideSuffix else { return }
        _ = try moveAside(names, in: directory, identity: file.identity, suffix: suffix)
    }

    /// Removes temporary files of this key left by writers that died long enough ago (best effort).
    func removeStaleTemporaryFiles(_ names: FileNames, in directory: StoreDirectory) {
        let prefix = names.data + ".tmp-"
        guard let entries = try? directory.entries() else { return }
        for entry in entries where entry.hasPrefix(prefix) {
            guard let info = try? directory.linkStatus(entry), KeychainIO.isRegularFile(info),
                KeychainIO.isOlder(info, than: Self.staleTemporaryAge)
            else { continue }
            _ = try? directory.remove(entry)
        }
    }
}
