internal import Foundation
internal import Logging

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Room for a refresh's answer, proved before the refresh is sent: a provider that rotates refresh
/// tokens (RFC 9700 §4.14.2) spends the stored one as it answers, so an answer the store cannot
/// keep loses the login. With the space held first, a full disk stops the refresh before any
/// network, and the stored login still works once there is room again.
extension FileKeychain {
    /// The space a save of a login now `bytes` long is given: twice its size and 16 KiB more (a
    /// rotated token, a new ID token), at most ``maximumFileSize``.
    static func reservedSize(for bytes: Int) -> Int { min(maximumFileSize, 2 * bytes + 16 * 1024) }

    /// Holds the space a save replacing `login` under `key` will need: writes `<name>.json.reserve`
    /// with that many bytes and flushes it (`fsync`), so that the blocks are really the store's.
    /// The next ``save(_:for:)`` or ``delete(_:)`` of the key removes it first, and writes into the
    /// room it leaves. Call it under the key's lock, before sending a refresh.
    ///
    /// What it proves is the room at that moment, kept until the save: another program may take
    /// space between the reservation's removal and the save's write (a few system calls), and a
    /// copy-on-write file system (btrfs, ZFS) may need more than the bytes reserved.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the room cannot be had (a full disk, a used-up
    ///   quota, a read-only file system, no permission): nothing of the login is changed, and the
    ///   message says that nothing was sent.
    public func reserveSpace(toReplace login: StoredLogin, for key: TokenStoreKey) throws(OIDCError) {
        let names = try FileNames(key)
        let size = Self.reservedSize(for: try encode(login, for: key).count)
        let directory = try createDirectory()
        let path = directory.path(names.reservation)
        do throws(OIDCError) {
            if simulatedFullDisk { throw KeychainIO.failure(ENOSPC, "reserving space in", path) }
            try directory.fill(names.reservation, size: size)
        } catch {
            _ = try? directory.remove(names.reservation)
            logger.warning("no room for a refresh's answer; nothing sent", metadata: metadata(key, ["bytes": .stringConvertible(size)]).merging(.failure(error)) { $1 })
            throw Self.noRoom(error, bytes: size, directory: directoryPath)
        }
        logger.trace("space reserved for the refreshed login", metadata: metadata(key, ["bytes": .stringConvertible(size)]))
    }

    /// The refusal of a reservation: what failed, and that the login is as it was and still works.
    static func noRoom(_ error: OIDCError, bytes: Int, directory: String) -> OIDCError {
        let reason = error.context["reason"] ?? error.message
        return OIDCError(
            .storageFailure,
            "The token store \(directory) has no room for the refreshed tokens (\(reason), reserving \(bytes) bytes), so the refresh was not sent: the stored login is unchanged and still works. Free some space (or choose another store directory) and try again.",
            context: error.context.merging(["path": error.context["path"] ?? directory, "bytes": String(bytes)]) { $1 }
        )
    }

    /// Removes the key's reservation (best effort): a save writes into the room it leaves.
    func releaseReservation(_ names: FileNames, in directory: StoreDirectory) {
        _ = try? directory.remove(names.reservation)
    }
}

extension StoreDirectory {
    /// Creates or truncates `name` (0600) and writes `size` zero bytes into it, then flushes it:
    /// blocks written, not a sparse file's promise.
    func fill(_ name: String, size: Int) throws(OIDCError) {
        let path = path(name)
        let file = try openFile(name, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode: 0o600, "reserving space in")
        var isOpen = true
        defer { if isOpen { KeychainIO.closeQuietly(file) } }
        let info = try KeychainIO.status(of: file, path)
        guard KeychainIO.isRegularFile(info), info.st_uid == KeychainIO.userID else {
            throw OIDCError(.storageFailure, "\(path) is not a regular file of yours: move it away.", context: ["path": path])
        }
        guard fchmod(file, 0o600) == 0 else { throw KeychainIO.failure(errno, "setting the permissions of", path) }
        try KeychainIO.writeAll(file, [UInt8](repeating: 0, count: size), path)
        try KeychainIO.sync(file, path)
        isOpen = false
        try KeychainIO.close(file, path)
    }
}
