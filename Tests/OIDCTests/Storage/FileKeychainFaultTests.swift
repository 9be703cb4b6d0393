import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hardening 5: the room a refresh's answer needs, held before the refresh is sent; a complete
/// temporary file of a save cut short, adopted at the next read; the logins a save replaced.
@Suite("FileKeychain: room before a refresh, saves cut short, replaced logins")
struct FileKeychainFaultTests {
    static let key = FileKeychainTests.key

    static func store() throws -> (FileKeychain, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-faults-\(UUID().uuidString)").path
        return (try FileKeychain(directory: URL(fileURLWithPath: path)), path)
    }

    static func permissions(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    static func size(_ path: String) -> Int? { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue }

    /// The bytes the store writes for `login` under `key`: saved in a scratch store and read back.
    static func bytes(of login: StoredLogin, encryption: TokenEncryption? = nil, key: TokenStoreKey = key) throws -> Data {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-scratch-\(UUID().uuidString)")
        let store = try FileKeychain(directory: scratch, encryption: encryption)
        try store.save(login, for: key)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: scratch.path).first { $0.hasSuffix(".json") })
        return try Data(contentsOf: scratch.appendingPathComponent(name))
    }

    /// The data file's name in `path`.
    static func dataFile(_ path: String) throws -> String {
        path + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: path).first { $0.hasSuffix(".json") }))
    }

    @Test("reserveSpace writes and keeps the room (0600) until the next save or delete, which removes it")
    func reservationKeptUntilTheSave() throws {
        let (store, path) = try Self.store()
        let login = FileKeychainTests.login()
        try store.save(login, for: Self.key)
        let data = try Self.dataFile(path)
        let reservation = data + ".reserve"
        try store.reserveSpace(toReplace: login, for: Self.key)
        let size = try #require(Self.size(reservation))
        #expect(size >= 2 * (Self.size(data) ?? 0))
        #expect(Self.permissions(reservation) == 0o600)
        #expect(try store.keys() == [Self.key], "the reservation is not a login")
        try store.save(FileKeychainTests.login("access-2"), for: Self.key)
        #expect(!FileManager.default.fileExists(atPath: reservation))
        #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-2"))
        try store.reserveSpace(toReplace: login, for: Self.key)
        try store.delete(Self.key)
        #expect(!FileManager.default.fileExists(atPath: reservation))
    }

    @Test("no room: reserveSpace throws storageFailure saying nothing was sent; the login is unchanged and no reservation is left")
    func noRoom() throws {
        var (store, path) = try Self.store()
        let login = FileKeychainTests.login()
        try store.save(login, for: Self.key)
        store.simulatedFullDisk = true
        let error = try #require(throws: OIDCError.self) { try store.reserveSpace(toReplace: login, for: Self.key) }
        #expect(error.code == .storageFailure)
        #expect(error.message.contains("the refresh was not sent"))
        #expect(error.message.contains("unchanged and still works"))
        #expect(!error.message.contains("refresh-1"))
        #expect(try store.load(Self.key) == login)
        #expect(!FileManager.default.fileExists(atPath: try Self.dataFile(path) + ".reserve"))
    }

    @Test("a full disk's message on a save no longer claims that the stored login was left as it was")
    func fullDiskMessage() throws {
        var (store, _) = try Self.store()
        store.simulatedFullDisk = true
        let error = try #require(throws: OIDCError.self) { try store.save(FileKeychainTests.login(), for: Self.key) }
        #expect(error.code == .storageFailure)
        #expect(error.message.contains("disk is full"))
        #expect(!error.message.contains("left as it was"))
    }

    @Test("a complete temporary file newer than the login is adopted by the next load; a torn one is not")
    func completeTemporaryFileAdopted() throws {
        let (store, path) = try Self.store()
        try store.save(FileKeychainTests.login("access-1"), for: Self.key)
        let data = try Self.dataFile(path)
        let newer = try Self.bytes(of: FileKeychainTests.login("access-rotated"))
        #expect(FileManager.default.createFile(atPath: data + ".tmp-0000000000000001", contents: newer, attributes: [.posixPermissions: 0o600]))
        #expect(FileManager.default.createFile(atPath: data + ".tmp-0000000000000002", contents: newer.prefix(20), attributes: [.posixPermissions: 0o600]))
        #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-rotated"))
        #expect(!FileManager.default.fileExists(atPath: data + ".tmp-0000000000000001"))
        #expect(FileManager.default.fileExists(atPath: data + ".tmp-0000000000000002"), "a torn file is nobody's login")
        #expect(Self.permissions(data) == 0o600)
    }

    @Test("a temporary file older than the login, readable by others, or sealed for another key is never adopted")
    func temporaryFilesNotAdopted() throws {
        let (store, path) = try Self.store()
        try store.save(FileKeychainTests.login("access-1"), for: Self.key)
        let data = try Self.dataFile(path)
        let other = try Self.bytes(of: FileKeychainTests.login("access-other"))
        // Older than the login: a save that failed before the one that landed.
        let old = data + ".tmp-00000000000000aa"
        #expect(FileManager.default.createFile(atPath: old, contents: other, attributes: [.posixPermissions: 0o600]))
        var past = [timeval(tv_sec: time(nil) - 3600, tv_usec: 0), timeval(tv_sec: time(nil) - 3600, tv_usec: 0)]
        #expect(utimes(old, &past) == 0)
        // Newer, but others may read it: not what the store writes.
        #expect(FileManager.default.createFile(atPath: data + ".tmp-00000000000000bb", contents: other, attributes: [.posixPermissions: 0o644]))
        // Newer, sealed, but for another key: it does not open as this key's login.
        let ring = try TokenEncryption(current: TokenEncryptionKey(id: "k1", bytes: [UInt8](repeating: 7, count: 32)))
        let sealed = try Self.bytes(of: FileKeychainTests.login("access-sealed"), encryption: ring, key: TokenStoreKey(service: "other", account: "a"))
        #expect(FileManager.default.createFile(atPath: data + ".tmp-00000000000000cc", contents: sealed, attributes: [.posixPermissions: 0o600]))
        let ringStore = try FileKeychain(directory: URL(fileURLWithPath: path), encryption: ring)
        #expect(try ringStore.load(Self.key)?.tokens.accessToken == Secret("access-1"))
        #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-1"))
    }

    @Test("a temporary file with the data file's time (whole-second timestamps) but older tokens is not adopted over a newer login")
    func sameSecondOlderTemporaryFileNotAdopted() throws {
        let (store, path) = try Self.store()
        var newer = FileKeychainTests.login("access-new-login")
        newer.tokens.receivedAt = Date(timeIntervalSince1970: 1_800_000_010)
        try store.save(newer, for: Self.key)
        let data = try Self.dataFile(path)
        // A refresh killed before its rename, whose tokens came ten seconds before the login that landed.
        let stale = data + ".tmp-00000000000000dd"
        #expect(FileManager.default.createFile(atPath: stale, contents: try Self.bytes(of: FileKeychainTests.login("access-killed-refresh")), attributes: [.posixPermissions: 0o600]))
        let second = time(nil) - 5
        var same = [timeval(tv_sec: second, tv_usec: 0), timeval(tv_sec: second, tv_usec: 0)]
        #expect(utimes(stale, &same) == 0)
        #expect(utimes(data, &same) == 0)
        #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-new-login"))
        #expect(FileManager.default.fileExists(atPath: stale))
    }

    @Test("a complete temporary file is not adopted while another task holds the key's lock (its writer may be renaming it); the holder's own load adopts it")
    func notAdoptedUnderAnotherHoldersLock() async throws {
        let (store, path) = try Self.store()
        try store.save(FileKeychainTests.login("access-1"), for: Self.key)
        let data = try Self.dataFile(path)
        let newer = try Self.bytes(of: FileKeychainTests.login("access-rotated"))
        let seen = try await store.withLock(Self.key) { () -> [String] in
            #expect(FileManager.default.createFile(atPath: data + ".tmp-0000000000000003", contents: newer, attributes: [.posixPermissions: 0o600]))
            // Another task, not under this lock: leaves it.
            let outside = try await Task.detached { try store.load(Self.key)?.tokens.accessToken.revealedValue ?? "" }.value
            // This task holds the lock: adopts it.
            let inside = try store.load(Self.key)?.tokens.accessToken.revealedValue ?? ""
            return [outside, inside]
        }
        #expect(seen == ["access-1", "access-rotated"])
    }

    @Test("a complete temporary file whose writer still runs (this process, named in the file's name) is not adopted; one whose writer is gone is")
    func writerStillRunning() throws {
        let (store, path) = try Self.store()
        try store.save(FileKeychainTests.login("access-1"), for: Self.key)
        let data = try Self.dataFile(path)
        let live = data + ".tmp-\(getpid())-0000000000000004"
        #expect(FileManager.default.createFile(atPath: live, contents: try Self.bytes(of: FileKeychainTests.login("access-live")), attributes: [.posixPermissions: 0o600]))
        #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-1"))
        #expect(FileManager.default.fileExists(atPath: live))
        // A process that has ended: its id names no running writer.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let gone = data + ".tmp-\(ended.processIdentifier)-0000000000000005"
        #expect(FileManager.default.createFile(atPath: gone, contents: try Self.bytes(of: FileKeychainTests.login("access-gone")), attributes: [.posixPermissions: 0o600]))
        #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-gone"))
    }

    @Test("replacedLogins records the readable login each save replaced, under its key")
    func replacedLoginsRecorded() throws {
        var (store, _) = try Self.store()
        let recorder = ReplacedLogins()
        store.replacedLogins = recorder
        try store.save(FileKeychainTests.login("access-1"), for: Self.key)
        #expect(recorder.logins(for: Self.key).isEmpty)
        try store.save(FileKeychainTests.login("access-2"), for: Self.key)
        try store.save(FileKeychainTests.login("access-3"), for: Self.key)
        #expect(recorder.logins(for: Self.key).map(\.tokens.accessToken) == [Secret("access-1"), Secret("access-2")])
        #expect(recorder.logins(for: TokenStoreKey(service: "other", account: "a")).isEmpty)
    }

    @Test("requireWritable: a store in a directory under a file is refused with storageFailure naming the path")
    func requireWritableRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-file-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let store = try FileKeychain(directory: URL(fileURLWithPath: file + "/store"))
        let error = try #require(throws: OIDCError.self) { try store.requireWritable() }
        #expect(error.code == .storageFailure)
        #expect(error.message.contains(file))
        let (writable, path) = try Self.store()
        try writable.requireWritable()
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty, "the probe was left behind")
    }
}
