import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// FileKeychain's lock, within a process and across processes, and writers killed mid-write.
extension FileKeychainTests {
    // MARK: Locking

    @Test("withLock excludes concurrent tasks of one process, across FileKeychain values", .timeLimit(.scaledMinutes(3)))
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

    @Test("a lock held too long gives a storageFailure; cancellation stops the wait; a throwing body releases", .timeLimit(.scaledMinutes(3)))
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

    @Test("withLock excludes another process, in both directions", .timeLimit(.scaledMinutes(3)))
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
          .timeLimit(.scaledMinutes(3)))
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
          .timeLimit(.scaledMinutes(3)))
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
          .timeLimit(.scaledMinutes(3)))
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

typealias WriterProcess = HelperProcess

extension HelperProcess {
    fileprivate convenience init(_ arguments: [String]) throws {
        try self.init("oidc-store-writer", arguments, watchdog: .scaled(.seconds(30)))
    }
}

/// How many tasks are inside the lock at once.
final class LockState: Sendable {
    private let state = Mutex((inside: 0, maximum: 0, entries: 0))

    func enter() { state.withLock { $0.inside += 1; $0.maximum = max($0.maximum, $0.inside); $0.entries += 1 } }
    func leave() { state.withLock { $0.inside -= 1 } }
    var snapshot: (inside: Int, maximum: Int, entries: Int) { state.withLock { $0 } }
}
