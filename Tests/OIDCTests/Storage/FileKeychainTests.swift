import Foundation
import OIDC
import OIDCTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("FileKeychain: the file-based token store")
struct FileKeychainTests {
    static let key = TokenStoreKey.schibsted(clientID: "client-1")

    static func login(_ access: String = "access-1", attributes: [String: String] = [:]) -> StoredLogin {
        StoredLogin(
            tokens: TokenSet(
                accessToken: Secret(access), refreshToken: Secret("refresh-1"), idToken: Secret("id-1"),
                expiresAt: Date(timeIntervalSince1970: 1_800_003_600), scopes: ["openid", "offline_access"],
                receivedAt: Date(timeIntervalSince1970: 1_800_000_000)
            ),
            issuer: "https://login.schibsted.com", clientID: "client-1", subject: "user-1", attributes: attributes
        )
    }

    // MARK: Basics

    @Test("a saved login loads back; a missing one is nil; delete forgets it and tolerates absence")
    func roundTrip() async throws {
        try await withStore { store, _ in
            #expect(try store.load(Self.key) == nil)
            #expect(try store.keys().isEmpty)
            try store.delete(Self.key)  // nothing there, not even the directory
            try store.save(Self.login(), for: Self.key)
            #expect(try store.load(Self.key) == Self.login())
            try store.save(Self.login("access-2"), for: Self.key)
            #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-2"))
            #expect(try store.keys() == [Self.key])
            try store.delete(Self.key)
            #expect(try store.load(Self.key) == nil)
            try store.delete(Self.key)
            #expect(try store.keys().isEmpty)
            // Through the protocol, as the session uses it.
            let any: any TokenStore = store
            try await any.save(Self.login(), for: Self.key)
            #expect(try await any.load(Self.key) == Self.login())
        }
    }

    @Test("the default directory is $XDG_STATE_HOME/oidc, else ~/.local/state/oidc; neither is an error")
    func defaultDirectory() throws {
        #expect(try FileKeychain.defaultDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]).path == "/s/oidc")
        #expect(try FileKeychain.defaultDirectory(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]).path == "/h/.local/state/oidc")
        #expect(try FileKeychain.defaultDirectory(environment: ["HOME": "/h"]).path == "/h/.local/state/oidc")
        let error = try #require(throws: OIDCError.self) { try FileKeychain.defaultDirectory(environment: ["HOME": ""]) }
        #expect(error.code == .invalidArgument)
    }

    static let trickyKeys: [TokenStoreKey] = [
        ("com.schibsted.account", "abc123"), ("../../etc", "passwd"), ("a/b", "c/d"), ("..", ".."), (".", "."), ("", ""),
        ("with space", "ünïcödé 🎉"), ("100%", "%41"), ("A", "a"), ("a", "A"), ("a@b", "c"), ("a", "b@c"), ("~", "-"),
        ("%2F", "/"), ("x.json", "y.lock"), ("a\u{0}b", "\n"),
    ].map { TokenStoreKey(service: $0.0, account: $0.1) }

    @Test("keys with slashes, dots, spaces, unicode and % stay inside the directory, round-trip and never collide")
    func keyEncoding() async throws {
        try await withStore { store, root in
            for (index, key) in Self.trickyKeys.enumerated() {
                try store.save(Self.login("access-\(index)"), for: key)
            }
            for (index, key) in Self.trickyKeys.enumerated() {
                #expect(try store.load(key)?.tokens.accessToken == Secret("access-\(index)"), "\(key)")
            }
            #expect(Set(try store.keys()) == Set(Self.trickyKeys))
            // Nothing escaped: the root holds only the store, the store only plain files.
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["store"])
            for entry in try FileManager.default.contentsOfDirectory(atPath: store.directory.path) {
                let info = try #require(statInfo(store.directory.appendingPathComponent(entry).path))
                #expect(info.st_mode & S_IFMT == S_IFREG, "\(entry)")
            }
            // Canonically equal strings are one key, and one file.
            let composed = TokenStoreKey(service: "caf\u{E9}", account: "x")
            let decomposed = TokenStoreKey(service: "cafe\u{301}", account: "x")
            try store.save(Self.login("nfc"), for: decomposed)
            #expect(try store.load(composed)?.tokens.accessToken == Secret("nfc"))
            #expect(try store.keys().count == Self.trickyKeys.count + 1)
        }
    }

    @Test("a key too long for a file name is an invalidArgument error")
    func longKey() async throws {
        try await withStore { store, _ in
            let key = TokenStoreKey(service: "s", account: String(repeating: "é", count: 40))
            let error = try #require(throws: OIDCError.self) { try store.save(Self.login(), for: key) }
            #expect(error.code == .invalidArgument)
        }
    }

    // MARK: Permissions

    @Test("the directory (and the parents it creates) is 0700, the data and lock files 0600")
    func permissions() async throws {
        try await withStore(subpath: "a/b/store") { store, root in
            try store.save(Self.login(), for: Self.key)
            try await store.withLock(Self.key) {}
            for directory in ["a", "a/b", "a/b/store"] {
                #expect(mode(root.appendingPathComponent(directory).path) == 0o700, "\(directory)")
            }
            let entries = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).sorted()
            #expect(entries.count == 2 && entries[0].hasSuffix(".json") && entries[1].hasSuffix(".json.lock"), "\(entries)")
            for entry in entries {
                #expect(mode(store.directory.appendingPathComponent(entry).path) == 0o600, "\(entry)")
            }
        }
    }

    @Test("an existing directory open to others is refused, not changed")
    func permissiveDirectory() async throws {
        try await withStore { store, _ in
            try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: false)
            #expect(chmod(store.directory.path, 0o755) == 0)
            let error = try #require(throws: OIDCError.self) { try store.save(Self.login(), for: Self.key) }
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("chmod 700 \(store.directory.path)"), "\(error)")
            #expect(mode(store.directory.path) == 0o755)
            #expect(throws: OIDCError.self) { try store.load(Self.key) }
        }
    }

    @Test("a data file readable by others, or a symbolic link, is refused, not fixed")
    func refusedFiles() async throws {
        try await withStore { store, root in
            try store.save(Self.login(), for: Self.key)
            let file = try dataFile(store)
            #expect(chmod(file.path, 0o644) == 0)
            let wide = try #require(throws: OIDCError.self) { try store.load(Self.key) }
            #expect(wide.code == .storageFailure && wide.message.contains("chmod 600"), "\(wide)")
            #expect(mode(file.path) == 0o644)

            let elsewhere = root.appendingPathComponent("elsewhere.json")
            try FileManager.default.moveItem(at: file, to: elsewhere)
            #expect(chmod(elsewhere.path, 0o600) == 0)
            try FileManager.default.createSymbolicLink(at: file, withDestinationURL: elsewhere)
            let link = try #require(throws: OIDCError.self) { try store.load(Self.key) }
            #expect(link.code == .storageFailure && link.message.contains("symbolic link"), "\(link)")
            #expect(link.context["path"] == file.path)
        }
    }

    @Test("a directory that cannot be written gives a storageFailure naming the path")
    func unwritableDirectory() async throws {
        try await withStore { store, root in
            // A file where a parent directory should be: fails for root as well.
            let blocker = root.appendingPathComponent("blocker")
            #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data()))
            let blocked = try FileKeychain(directory: blocker.appendingPathComponent("store"))
            let error = try #require(throws: OIDCError.self) { try blocked.save(Self.login(), for: Self.key) }
            #expect(error.code == .storageFailure && error.category == .storage)
            #expect(error.message.contains(blocker.path), "\(error)")
            #expect(!error.message.contains("access-1") && !error.description.contains("refresh-1"))

            // A file where the store directory should be.
            let squatted = try FileKeychain(directory: blocker)
            let notDirectory = try #require(throws: OIDCError.self) { try squatted.save(Self.login(), for: Self.key) }
            #expect(notDirectory.message.contains("not a directory") && notDirectory.message.contains(blocker.path), "\(notDirectory)")

            // Root ignores permission bits, so only an ordinary user can see this one.
            guard geteuid() != 0 else { return }
            try store.save(Self.login(), for: Self.key)
            #expect(chmod(store.directory.path, 0o500) == 0)
            defer { _ = chmod(store.directory.path, 0o700) }
            let denied = try #require(throws: OIDCError.self) { try store.save(Self.login("access-2"), for: Self.key) }
            #expect(denied.code == .storageFailure && denied.message.contains("Permission denied"), "\(denied)")
            #expect(denied.message.contains(store.directory.path))
            #expect(try store.load(Self.key) == Self.login())
        }
    }

    // MARK: Corruption

    @Test("a corrupt file is a corruptStore error naming it; it is moved aside intact and a later save works",
          arguments: ["{not json", #"{"version":1,"issuer":"i","client_id":"c","tokens":{}}"#, ""])
    func corruptFile(content: String) async throws {
        try await withStore { store, _ in
            try store.save(Self.login(), for: Self.key)
            let file = try dataFile(store)
            try Data(content.utf8).write(to: file)
            let error = try #require(throws: OIDCError.self) { try store.load(Self.key) }
            #expect(error.code == .corruptStore && error.category == .storage)
            #expect(error.context["path"] == file.path)
            let movedTo = try #require(error.context["movedTo"])
            #expect(movedTo.hasPrefix(file.path + ".corrupt-"))
            #expect(error.message.contains(file.path) && error.message.contains(movedTo), "\(error)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: movedTo)) == Data(content.utf8))
            #expect(!FileManager.default.fileExists(atPath: file.path))

            #expect(try store.load(Self.key) == nil)
            #expect(try store.keys().isEmpty)
            try store.save(Self.login("access-2"), for: Self.key)
            #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-2"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: movedTo)) == Data(content.utf8))
            #expect(try store.keys() == [Self.key])
        }
    }

    @Test("a save over a corrupt file that nobody loaded moves it aside instead of overwriting it")
    func saveKeepsCorruptFile() async throws {
        try await withStore { store, _ in
            try store.save(Self.login(), for: Self.key)
            let file = try dataFile(store)
            try Data("garbage".utf8).write(to: file)
            try store.save(Self.login("access-2"), for: Self.key)
            #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-2"))
            let aside = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).filter { $0.contains(".corrupt-") }
            #expect(aside.count == 1)
            let kept = try Data(contentsOf: store.directory.appendingPathComponent(try #require(aside.first)))
            #expect(kept == Data("garbage".utf8))
        }
    }

    @Test("saves leave no temporary files; stale ones of a dead writer are removed, fresh ones kept")
    func temporaryFiles() async throws {
        try await withStore { store, _ in
            for index in 0..<20 { try store.save(Self.login("access-\(index)"), for: Self.key) }
            let data = try dataFile(store)
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path) == [data.lastPathComponent])

            let stale = URL(fileURLWithPath: data.path + ".tmp-0000000000000001")
            let fresh = URL(fileURLWithPath: data.path + ".tmp-0000000000000002")
            for file in [stale, fresh] { #expect(FileManager.default.createFile(atPath: file.path, contents: Data("{".utf8))) }
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: stale.path)
            #expect(try store.keys() == [Self.key])
            try store.save(Self.login(), for: Self.key)
            #expect(!FileManager.default.fileExists(atPath: stale.path))
            #expect(FileManager.default.fileExists(atPath: fresh.path))
            #expect(try store.load(Self.key) == Self.login())
        }
    }

    // MARK: Locking

    @Test("withLock excludes concurrent tasks of one process, across FileKeychain values", .timeLimit(.minutes(3)))
    func lockExcludesTasks() async throws {
        try await withStore { store, _ in
            let state = LockState()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let mine = try FileKeychain(directory: store.directory)
                        for _ in 0..<5 {
                            try await mine.withLock(Self.key) {
                                state.enter()
                                // A read-modify-write inside the lock: load and save do not re-lock.
                                let count = try #require(Int(try mine.load(Self.key)?.attributes["count"] ?? "0"))
                                try await Task.sleep(for: .milliseconds(1))
                                try mine.save(Self.login(attributes: ["count": String(count + 1)]), for: Self.key)
                                state.leave()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = state.snapshot
            #expect(final.maximum == 1 && final.entries == 30)
            #expect(try store.load(Self.key)?.attributes["count"] == "30")
        }
    }

    @Test("a lock held too long gives a storageFailure; cancellation stops the wait; a throwing body releases", .timeLimit(.minutes(3)))
    func lockTimeoutAndRelease() async throws {
        try await withStore { store, _ in
            let impatient = try FileKeychain(directory: store.directory, lockTimeout: .milliseconds(150))
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await store.withLock(Self.key) {
                    holding.yield()
                    for await _ in release { break }
                }
            }
            for await _ in held { break }

            let start = ContinuousClock.now
            let error = try await #require(throws: OIDCError.self) { try await impatient.withLock(Self.key) {} }
            #expect(error.code == .storageFailure && error.message.contains("held"), "\(error)")
            #expect(error.context["path"]?.hasSuffix(".json.lock") == true)
            #expect(ContinuousClock.now - start >= .milliseconds(150))

            let waiter = Task { try await store.withLock(Self.key) {} }
            try await Task.sleep(for: .milliseconds(50))
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }

            releasing.yield()
            try await holder.value

            struct Boom: Error {}
            await #expect(throws: Boom.self) { try await store.withLock(Self.key) { throw Boom() } }
            #expect(try await impatient.withLock(Self.key) { 42 } == 42)
        }
    }

    @Test("withLock excludes another process, in both directions", .timeLimit(.minutes(3)))
    func lockExcludesProcesses() async throws {
        try await withStore { store, _ in
            let key = Self.key
            // The writer holds the lock, then saves "held" just before releasing it: our locked read sees it.
            let holder = try WriterProcess([store.directory.path, key.service, key.account, "hold", "400"])
            #expect(await holder.waitForLine("locked"))
            let seen = try await store.withLock(key) { try store.load(key) }
            #expect(seen?.attributes["check"] == "held", "\(String(describing: seen?.attributes["check"]))")
            #expect(await holder.exitStatus() == .exited(0))

            // We hold the lock: the writer's locked save waits until we release it.
            try store.delete(key)
            let writer = try await store.withLock(key) {
                let writer = try WriterProcess([store.directory.path, key.service, key.account, "1", "lock"])
                #expect(await writer.waitForLine("started"))
                try await Task.sleep(for: .milliseconds(300))
                #expect(try store.load(key) == nil)
                return writer
            }
            #expect(await writer.exitStatus() == .exited(0), "\(writer.standardError)")
            #expect(try store.load(key)?.attributes["check"] == "0")
        }
    }

    @Test("a directory replaced or moved away while its lock is held: load, save and delete under the lock refuse and touch neither directory",
          .timeLimit(.minutes(3)))
    func directoryReplacedUnderLock() async throws {
        try await withStore { store, root in
            let other = try FileKeychain(directory: root.appendingPathComponent("other"))
            try other.save(Self.login("other-directory"), for: Self.key)
            try store.save(Self.login("locked-directory"), for: Self.key)
            let moved = root.appendingPathComponent("moved")

            try await store.withLock(Self.key) {
                // Someone swaps the store's directory while we hold its lock.
                try FileManager.default.moveItem(at: store.directory, to: moved)
                try FileManager.default.moveItem(at: other.directory, to: store.directory)
                for (name, attempt) in [
                    ("load", { _ = try store.load(Self.key) }),
                    ("save", { try store.save(Self.login("written-under-a-split-lock"), for: Self.key) }),
                    ("delete", { try store.delete(Self.key) }),
                ] as [(String, () throws -> Void)] {
                    let error = try #require(throws: OIDCError.self, "\(name)") { try attempt() }
                    #expect(error.code == .storageFailure && error.message.contains("replaced"), "\(name): \(error)")
                }
            }
            // Neither directory changed; outside the lock the store is the directory now at its path.
            #expect(try store.load(Self.key)?.tokens.accessToken == Secret("other-directory"))
            #expect(try FileKeychain(directory: moved).load(Self.key)?.tokens.accessToken == Secret("locked-directory"))

            // Moved away with nothing in its place: not "no login" (which a session would take for a logout).
            try await store.withLock(Self.key) {
                try FileManager.default.moveItem(at: store.directory, to: root.appendingPathComponent("moved-again"))
                let error = try #require(throws: OIDCError.self) { try store.load(Self.key) }
                #expect(error.code == .storageFailure && error.message.contains("moved away"), "\(error)")
                #expect(throws: OIDCError.self) { try store.delete(Self.key) }
                #expect(throws: OIDCError.self) { try store.save(Self.login(), for: Self.key) }
                #expect(!FileManager.default.fileExists(atPath: store.directory.path))  // not created again
            }
        }
    }

    @Test("a lock file removed while others wait: a waiter that then gets the old file's lock takes the new one instead",
          .timeLimit(.minutes(3)))
    func lockFileReplacedWhileWaiting() async throws {
        try await withStore { store, _ in
            let state = LockState()
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let first = Task {
                // Not counted: removing its lock file took its exclusion away (which is why lock files are kept).
                try await store.withLock(Self.key) {
                    holding.yield()
                    for await _ in release { break }
                }
            }
            for await _ in held { break }
            // Waits on the lock file that is about to be removed.
            let waiter = Task {
                try await store.withLock(Self.key) {
                    state.enter()
                    try await Task.sleep(for: .milliseconds(20))
                    state.leave()
                }
            }
            try await Task.sleep(for: .milliseconds(150))
            let lockFile = try #require(
                try FileManager.default.contentsOfDirectory(atPath: store.directory.path).first { $0.hasSuffix(".lock") })
            try FileManager.default.removeItem(atPath: store.directory.appendingPathComponent(lockFile).path)
            // A newcomer creates a new lock file and holds it while the first holder lets go of the old one.
            try await store.withLock(Self.key) {
                state.enter()
                releasing.yield()
                try await first.value
                try await Task.sleep(for: .milliseconds(200))  // the waiter now has the old file's lock
                state.leave()
            }
            try await waiter.value
            let final = state.snapshot
            #expect(final.maximum == 1 && final.entries == 2, "\(final)")
        }
    }

    // MARK: Crashes

    @Test("a writer killed at any moment leaves the old or the new login, never a mix; modes hold under umask 0",
          .timeLimit(.minutes(3)))
    func killedWriters() async throws {
        try await withStore(subpath: "nested/store") { store, root in
            let key = TokenStoreKey(service: "com.schibsted.account", account: "kill-test")
            let iterations = 100
            var beforeFirstWrite = 0, midSequence = 0
            for iteration in 0..<iterations {
                try store.delete(key)  // so that nil means "killed before its first write"
                let locking = iteration % 2 == 1
                var arguments = [store.directory.path, key.service, key.account, "1000000"]
                if locking { arguments.append("lock") }
                let writer = try WriterProcess(arguments)
                // Half the kills count from the launch, half from the writer's first write.
                if iteration % 4 >= 2 { _ = await writer.waitForLine("started") }
                try await Task.sleep(for: .microseconds(Int.random(in: 0...30_000)))
                writer.kill()
                let status = await writer.exitStatus()
                #expect(status == .signalled(SIGKILL), "iteration \(iteration): \(status) \(writer.standardError)")

                let login: StoredLogin?
                do {
                    login = try store.load(key)
                } catch {
                    Issue.record("iteration \(iteration): reading back failed: \(error)")
                    return
                }
                guard let login else {
                    beforeFirstWrite += 1
                    continue
                }
                midSequence += 1
                let generation = try #require(login.attributes["check"])
                // A Bool, not the logins: their padding would flood the log.
                let consistent = login == writerLogin(generation)
                #expect(consistent, "iteration \(iteration): generation \(generation) is not self-consistent")
            }
            print("FileKeychain kill test: \(iterations) writers killed, \(midSequence) mid-sequence, \(beforeFirstWrite) before their first write")
            #expect(midSequence > 0)

            let entries = try FileManager.default.contentsOfDirectory(atPath: store.directory.path)
            let temporary = entries.filter { $0.contains(".tmp-") }
            print("FileKeychain kill test: \(temporary.count) temporary files left by killed writers")
            // The last writer may have died before its first save (the entry is deleted before each
            // one starts): then there is no data file, only the lock file.
            let keys = try store.keys()
            #expect(keys == [key] || keys.isEmpty, "\(entries)")
            #expect(!entries.contains { $0.contains(".corrupt-") }, "\(entries)")
            #expect(Set(entries.filter { !$0.contains(".tmp-") }).count == keys.count + 1, "\(entries)")
            // Created by writers running with umask 0.
            #expect(mode(root.appendingPathComponent("nested").path) == 0o700)
            #expect(mode(store.directory.path) == 0o700)
            for entry in entries {
                #expect(mode(store.directory.appendingPathComponent(entry).path) == 0o600, "\(entry)")
            }
        }
    }

    @Test("a login written by a newer format version is refused, not moved aside: that version can still read it")
    func newerVersion() async throws {
        try await withStore { store, _ in
            try store.save(Self.login(), for: Self.key)
            let file = try dataFile(store)
            let newer = Data(#"{"version":2,"issuer":"i","client_id":"c","tokens":{}}"#.utf8)
            try newer.write(to: file)
            let error = try #require(throws: OIDCError.self) { try store.load(Self.key) }
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("newer"))
            #expect(try Data(contentsOf: file) == newer)
        }
    }
}

// MARK: - Helpers

/// Runs `body` with a store in a fresh temporary directory (`root/subpath`), removed afterwards.
private func withStore(
    subpath: String = "store", _ body: (FileKeychain, URL) async throws -> Void
) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("FileKeychainTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let store = try FileKeychain(directory: root.appendingPathComponent(subpath))
    try await body(store, root)
}

private func statInfo(_ path: String) -> stat? {
    var info = stat()
    return lstat(path, &info) == 0 ? info : nil
}

private func mode(_ path: String) -> mode_t? {
    statInfo(path).map { $0.st_mode & 0o7777 }
}

/// The store's one data file.
private func dataFile(_ store: FileKeychain) throws -> URL {
    let names = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).filter { $0.hasSuffix(".json") }
    try #require(names.count == 1, "\(names)")
    return store.directory.appendingPathComponent(names[0])
}

/// The login `oidc-store-writer` saves as `generation` (the same recipe as its main.swift).
private func writerLogin(_ generation: String) -> StoredLogin {
    var padding = ""
    while padding.utf8.count < 6000 { padding += generation + "|" }
    return StoredLogin(
        tokens: TokenSet(
            accessToken: Secret("gen-" + generation), refreshToken: Secret("refresh-" + generation),
            receivedAt: Date(timeIntervalSince1970: 1_800_000_000)
        ),
        issuer: "https://issuer.example", clientID: "writer",
        attributes: ["check": generation, "padding": padding]
    )
}

/// A running `oidc-store-writer`. Its output is read and its exit awaited on Dispatch and
/// Foundation threads, never by blocking one of Swift's cooperative pool.
private final class WriterProcess: Sendable {
    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32), signalled(Int32), timedOut
        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            case .timedOut: "timed out"
            }
        }
    }

    /// Built beside the test bundle, like `oidc` (see OIDCCLITests/CommandRunner.swift).
    static var url: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("oidc-store-writer").path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("oidc-store-writer")
    }

    private let child: ChildProcess
    private let pid: Int32
    private let lines: AsyncStream<String>
    private let exits: AsyncStream<Status>
    private let errorOutput = Mutex("")

    var standardError: String { errorOutput.withLock { $0 } }

    /// Started with posix_spawn (OIDCTesting's ChildProcess), not Foundation's Process, which can
    /// crash a test process with many descriptors open.
    init(_ arguments: [String]) throws {
        let child = try ChildProcess(Self.url.path, arguments)
        self.child = child
        pid = child.pid
        let (exits, exited) = AsyncStream.makeStream(of: Status.self)
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        self.exits = exits
        Thread.detachNewThread {
            var pending = ""
            // Ends at end of file, when the writer exits (it is killed at the latest by exitStatus's watchdog).
            for _ in 0..<100_000 {
                let chunk = child.readOutput()
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: "\n") {
                    line.yield(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
            line.finish()
        }
        Thread.detachNewThread {
            switch child.waitForTermination() {
            case .exited(let code): exited.yield(.exited(code))
            case .signalled(let signal): exited.yield(.signalled(signal))
            }
            exited.finish()
        }
        Thread.detachNewThread { [self] in
            let text = child.standardError
            errorOutput.withLock { $0 = text }
        }
    }

    func kill() { sendKill(pid) }

    /// Whether the writer printed `expected` (`false` if it exited first or took over 30 s).
    func waitForLine(_ expected: String) async -> Bool {
        let watchdog = Task { [pid] in
            try await Task.sleep(for: .seconds(30))
            sendKill(pid)
        }
        defer { watchdog.cancel() }
        for await line in lines where line == expected { return true }
        return false
    }

    /// How the writer ended; killed after 30 s.
    func exitStatus() async -> Status {
        let watchdog = Task { [pid] in
            try await Task.sleep(for: .seconds(30))
            sendKill(pid)
        }
        defer { watchdog.cancel() }
        for await status in exits { return status }
        return .timedOut
    }
}

private func sendKill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}

/// How many tasks are inside the lock at once.
private final class LockState: Sendable {
    private let state = Mutex((inside: 0, maximum: 0, entries: 0))

    func enter() { state.withLock { $0.inside += 1; $0.maximum = max($0.maximum, $0.inside); $0.entries += 1 } }
    func leave() { state.withLock { $0.inside -= 1 } }
    var snapshot: (inside: Int, maximum: Int, entries: Int) { state.withLock { $0 } }
}
