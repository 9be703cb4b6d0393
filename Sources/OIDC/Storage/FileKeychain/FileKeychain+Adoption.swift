internal import Foundation
internal import Logging

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A save killed after its temporary file was complete, before the rename: the temporary file
/// holds the newest login (a rotated refresh token the provider already spent the old one for), so
/// the next read adopts it instead of the login it was to replace.
extension FileKeychain {
    /// Renames over the data file the newest temporary file of `key` that is complete, when it is
    /// newer than the data file (or there is none) by its time and not older by its tokens' arrival, its writer (named in the file's name) no longer
    /// runs, and no other writer holds the key's lock (a writer may be about to rename its own file). Complete: a regular file of the
    /// user's that no one else can read, that reads as this key's login (it parses; a sealed one
    /// opens with the ring and is bound to this key). Best effort: anything in the way (a lock
    /// held, a file refused) leaves everything as it is.
    func adoptCompleteTemporaryFile(_ names: FileNames, for key: TokenStoreKey, in directory: StoreDirectory) {
        guard let entries = try? directory.entries(), entries.contains(where: { $0.hasPrefix(names.temporaryPrefix) }) else { return }
        let lockPath = directory.path(names.lock)
        var probe: Int32?
        if !Self.heldLocks.contains(lockPath) {
            // Not this task's lock: taken here for a moment, or nothing is adopted.
            guard let fd = try? openLockFile(names.lock, in: directory) else { return }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                KeychainIO.closeQuietly(fd)
                return
            }
            probe = fd
        }
        defer { if let probe { KeychainIO.closeQuietly(probe) } }
        let current = (try? directory.linkStatus(names.data)).flatMap { $0 }.map(KeychainIO.modified)
        var candidates: [(name: String, modified: timespec)] = []
        for entry in entries where entry.hasPrefix(names.temporaryPrefix) && !Self.writerIsAlive(entry.dropFirst(names.temporaryPrefix.count)) {
            guard let info = try? directory.linkStatus(entry), KeychainIO.isRegularFile(info) else { continue }
            let modified = KeychainIO.modified(info)
            if let current, KeychainIO.isBefore(modified, current) { continue }
            candidates.append((entry, modified))
        }
        // The newest first: the last save that got as far as a complete file.
        candidates.sort { KeychainIO.isBefore($1.modified, $0.modified) }
        // Timestamps may be whole seconds (some file systems): a temporary file as old as the data
        // file by its time may be older by its content (a refresh killed, then a new login in the
        // same second). Tokens that arrived before the stored ones are never adopted over them.
        let stored = (try? readDataFile(names.data, in: directory))?.bytes.flatMap { try? decode($0, for: key, path: directory.path(names.data)) }
        for candidate in candidates {
            let path = directory.path(candidate.name)
            // The checks of a data file: a regular file of the user's, 0600 or stricter, not too large.
            guard let file = try? readDataFile(candidate.name, in: directory), let bytes = file.bytes,
                let login = try? decode(bytes, for: key, path: path),
                stored.map({ login.tokens.receivedAt >= $0.tokens.receivedAt }) ?? true
            else { continue }
            do throws(OIDCError) {
                guard let now = try directory.linkStatus(candidate.name), FileIdentity(now) == file.identity else { continue }
                try directory.rename(candidate.name, to: names.data)
                try directory.sync()
            } catch {
                logger.warning("a complete temporary file could not be adopted", metadata: metadata(key, ["path": .untrusted(path, limit: 256)]).merging(.failure(error)) { $1 })
                return
            }
            logger.notice(
                "adopted the complete temporary file of a save that was cut short (killed before its rename)",
                metadata: metadata(key, ["path": .untrusted(path, limit: 256)]))
            return
        }
    }
}

extension FileKeychain {
    /// Whether the process that is writing the temporary file whose name ends in `suffix`
    /// (`<pid>-<16 hex digits>`) still runs: this process (another task may be about to rename
    /// it), or another that `kill(pid, 0)` finds. A name without a process id (an older writer's)
    /// says nothing: `false`.
    static func writerIsAlive(_ suffix: Substring) -> Bool {
        let parts = suffix.split(separator: "-")
        guard parts.count == 2, parts[1].count == 16, let pid = pid_t(parts[0]), pid > 0 else { return false }
        if pid == getpid() { return true }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}

/// The logins ``FileKeychain/save(_:for:)`` replaced, as a store with
/// ``FileKeychain/replacedLogins`` records them: `oidc login` revokes the refresh token of the login
/// it replaces, read under the lock the save holds (so two logins at once revoke each other's loser).
package final class ReplacedLogins: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [(key: TokenStoreKey, login: StoredLogin)] = []

    package init() {}

    func record(_ login: StoredLogin, key: TokenStoreKey) { lock.withLock { kept.append((key, login)) } }

    /// The logins replaced under `key`, in the order of the saves.
    package func logins(for key: TokenStoreKey) -> [StoredLogin] { lock.withLock { kept.filter { $0.key == key }.map(\.login) } }
}

extension KeychainIO {
    /// When `info`'s file was last modified, to the nanosecond where the file system keeps it.
    static func modified(_ info: stat) -> timespec {
        #if canImport(Darwin)
        info.st_mtimespec
        #else
        info.st_mtim
        #endif
    }

    /// Whether `a` is strictly earlier than `b`.
    static func isBefore(_ a: timespec, _ b: timespec) -> Bool {
        a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec
    }
}
