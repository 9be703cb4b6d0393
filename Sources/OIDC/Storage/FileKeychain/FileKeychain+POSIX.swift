internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The system calls behind ``FileKeychain``: every one retried on `EINTR` (a bounded number of
/// times), every failure turned into an ``OIDCError`` that names the path and never the content.
enum KeychainIO {
    /// How often an interrupted call is retried before giving up.
    static let interruptRetries = 1000

    /// A storage error for `code` (an `errno` value), met while `action` (`"writing"`) on `path`.
    static func failure(_ code: Int32, _ action: String, _ path: String) -> OIDCError {
        let reason = String(cString: strerror(code))
        let context = ["path": path, "operation": action, "reason": reason]
        let message: String
        switch code {
        case EACCES, EPERM:
            message = "Permission denied \(action) \(path): check that it and its directory belong to you and are writable by you (ls -ld)."
        case ENOSPC, EDQUOT:
            message = "The disk is full (or your disk quota is used up) \(action) \(path): free some space and try again."
        case EROFS:
            message = "\(path) is on a read-only file system (\(action)): choose a writable directory for the token store."
        case ENOTDIR:
            message = "A part of \(path) is not a directory (\(action)): move the file that is in the way, or choose another directory."
        case ELOOP:
            message = "\(path) is a symbolic link; the token store does not follow links (\(action)): replace it with the file itself."
        default:
            message = "Could not finish \(action) \(path): \(reason)."
        }
        return OIDCError(.storageFailure, message, context: context)
    }

    /// Runs `call` until it does not fail with `EINTR`; returns its result and the `errno` of a failure.
    static func retrying<T: BinaryInteger>(_ call: () -> T) -> (result: T, error: Int32) {
        for _ in 0..<interruptRetries {
            let result = call()
            if result >= 0 { return (result, 0) }
            let code = errno
            if code != EINTR { return (result, code) }
        }
        return (-1, EINTR)
    }

    /// `open(2)`, or `nil` when nothing is at `path`.
    static func openIfPresent(_ path: String, _ flags: Int32, _ action: String) throws(OIDCError) -> Int32? {
        let (fd, error) = retrying { systemOpen(path, flags, 0) }
        if fd >= 0 { return fd }
        if error == ENOENT { return nil }
        throw failure(error, action, path)
    }

    static func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        #if canImport(Glibc) || canImport(Musl)
        Glibc.open(path, flags, mode)
        #else
        Darwin.open(path, flags, mode)
        #endif
    }

    /// `fstat(2)`.
    static func status(of fd: Int32, _ path: String) throws(OIDCError) -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(errno, "examining", path) }
        return info
    }

    static func isRegularFile(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFREG }
    static func permissions(_ info: stat) -> mode_t { info.st_mode & 0o7777 }

    /// Writes every byte, across partial writes and interruptions.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ path: String) throws(OIDCError) {
        var offset = 0
        var passes = 0
        // Each pass writes at least one byte, is interrupted (a bounded number of times), or fails.
        while offset < bytes.count {
            passes += 1
            guard passes <= bytes.count + interruptRetries else { throw failure(EIO, "writing", path) }
            let written = bytes.withUnsafeBytes { buffer in
                write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                throw failure(written == 0 ? EIO : errno, "writing", path)
            }
        }
    }

    /// Reads the whole file, refusing more than `limit` bytes (returns `nil` then).
    static func readAll(_ fd: Int32, limit: Int, _ path: String) throws(OIDCError) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        for _ in 0...(limit / chunk.count + 1 + interruptRetries) {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno, "reading", path)
            }
            bytes += chunk[0..<count]
            if bytes.count > limit { return nil }
        }
        return nil
    }

    /// `fsync(2)` of a file.
    static func sync(_ fd: Int32, _ path: String) throws(OIDCError) {
        let (_, error) = retrying { fsync(fd) }
        if error != 0 { throw failure(error, "flushing to disk", path) }
    }

    /// `close(2)`, reporting a failure (NFS reports some write errors only here). Never retried:
    /// after `EINTR` the descriptor is already gone on Linux.
    static func close(_ fd: Int32, _ path: String) throws(OIDCError) {
        #if canImport(Glibc) || canImport(Musl)
        let result = Glibc.close(fd)
        #else
        let result = Darwin.close(fd)
        #endif
        if result != 0, errno != EINTR { throw failure(errno, "closing", path) }
    }

    /// Closes a descriptor whose errors no longer matter (a read, a failed write, a lock).
    static func closeQuietly(_ fd: Int32) {
        #if canImport(Glibc) || canImport(Musl)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// Creates `path` and its missing parents, each with mode 0700 (the XDG rule for state
    /// directories); existing parents are left alone.
    static func makeDirectories(_ path: String) throws(OIDCError) {
        var prefix = ""
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        for component in components {
            prefix += "/" + component
            if mkdir(prefix, 0o700) == 0 {
                // The umask can only have removed bits; set exactly 0700 (never wider than mkdir gave).
                if chmod(prefix, 0o700) != 0 { throw failure(errno, "creating the directory", prefix) }
                continue
            }
            let code = errno
            guard code == EEXIST else { throw failure(code, "creating the directory", prefix) }
        }
    }

    /// 16 random hex digits for a temporary file's name.
    static func randomSuffix() -> String {
        let value = UInt64.random(in: .min ... .max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `20260102T030405Z`: now, in UTC.
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        guard gmtime_r(&now, &parts) != nil else { return String(now) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// The effective user id: the owner every file of the store must have.
    static var userID: uid_t { geteuid() }

    /// Whether `info` was last modified more than `age` seconds ago.
    static func isOlder(_ info: stat, than age: Int) -> Bool {
        #if canImport(Darwin)
        let modified = info.st_mtimespec.tv_sec
        #else
        let modified = info.st_mtim.tv_sec
        #endif
        return time(nil) - modified > age
    }
}
