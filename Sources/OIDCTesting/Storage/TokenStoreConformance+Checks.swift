internal import Foundation
internal import OIDC
internal import Synchronization

/// One check's store maker and keys (`TokenStoreConformance`).
struct CheckContext: Sendable {
    let makeStore: @Sendable () async throws -> any TokenStore
    let prefix: String

    /// A key of this check alone.
    func key(_ name: String = "login") -> TokenStoreKey {
        TokenStoreKey(service: prefix, account: name)
    }

    func run(_ check: TokenStoreConformance.Check) async throws {
        switch check {
        case .missingLogin: try await missingLogin()
        case .roundTrip: try await roundTrip()
        case .separateKeys: try await separateKeys()
        case .atomicSave: try await atomicSave()
        case .lockExcludes: try await lockExcludes()
        case .lockReleases: try await lockReleases()
        case .locksPerKey: try await locksPerKey()
        case .lockHandsOver: try await lockHandsOver()
        case .deleteLogins: try await deleteLogins()
        }
    }

    /// A self-checking login: access token `gen-N`, attribute `check` = N, and a padding
    /// attribute of some KiB derived from N, so that a mix of two saves shows.
    static func login(_ generation: Int) -> StoredLogin {
        StoredLogin(
            tokens: TokenSet(
                accessToken: Secret("gen-\(generation)"), refreshToken: Secret("refresh-\(generation)"), idToken: nil,
                expiresAt: Date(timeIntervalSince1970: 1_800_003_600), scopes: ["openid", "offline_access"],
                receivedAt: Date(timeIntervalSince1970: 1_800_000_000)
            ),
            issuer: "https://issuer.example", clientID: "conformance", subject: "user-\(generation)",
            attributes: ["check": String(generation), "padding": String(repeating: String(generation % 10), count: 4096)]
        )
    }

    /// Whether `login` is one whole save of ``login(_:)``.
    static func isWhole(_ login: StoredLogin) -> Bool {
        guard let generation = login.attributes["check"].flatMap(Int.init) else { return false }
        return login == Self.login(generation)
    }

    // MARK: Checks

    func missingLogin() async throws {
        let store = try await makeStore()
        if let found = try await store.load(key()) { throw Broken("found \(found) under a key never saved") }
        try await store.delete(key())
    }

    func roundTrip() async throws {
        let store = try await makeStore()
        try await store.save(Self.login(1), for: key())
        let loaded = try await store.load(key())
        guard loaded == Self.login(1) else { throw Broken("saved \(Self.login(1)), loaded \(String(describing: loaded))") }
        try await store.save(Self.login(2), for: key())
        let replaced = try await makeStore().load(key())
        guard replaced == Self.login(2) else { throw Broken("the second save was not loaded back (another store value): \(String(describing: replaced))") }
        try await store.delete(key())
        if let left = try await store.load(key()) { throw Broken("a deleted login still loads: \(left)") }
        try await store.delete(key())
    }

    func separateKeys() async throws {
        let store = try await makeStore()
        let names = ["plain", "a/b", "../up", ".hidden", "with space", "ü e\u{301}", "100%", "a'; DROP TABLE x; --"]
        for (generation, name) in names.enumerated() { try await store.save(Self.login(generation), for: key(name)) }
        for (generation, name) in names.enumerated() {
            let loaded = try await store.load(key(name))
            guard loaded == Self.login(generation) else {
                throw Broken("key \(name.debugDescription) loaded \(String(describing: loaded)), not its own login")
            }
        }
        try await store.delete(key(names[0]))
        guard try await store.load(key(names[1])) == Self.login(1) else { throw Broken("deleting one key deleted another") }
        for name in names { try await store.delete(key(name)) }
    }

    func atomicSave() async throws {
        let writer = try await makeStore(), reader = try await makeStore()
        let key = key()
        try await writer.save(Self.login(0), for: key)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for generation in 1...40 { try await writer.save(Self.login(generation), for: key) }
            }
            group.addTask {
                for _ in 0..<40 {
                    guard let login = try await reader.load(key) else { throw Broken("a login disappeared while it was being replaced") }
                    guard Self.isWhole(login) else { throw Broken("read a mix of two saves: \(login.attributes["check"] ?? "no check")") }
                }
            }
            try await group.waitForAll()
        }
        try await writer.delete(key)
    }

    func lockExcludes() async throws {
        let key = key()
        let inside = Shared((now: 0, most: 0, entries: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                let store = try await makeStore()
                group.addTask {
                    for _ in 0..<5 {
                        try await store.withLock(key) {
                            inside.withLock { $0.now += 1; $0.most = max($0.most, $0.now); $0.entries += 1 }
                            // A read-modify-write: lost updates show as a count below 30.
                            let count = try await store.load(key).flatMap { $0.attributes["check"].flatMap(Int.init) } ?? 0
                            await Task.yield()
                            try await store.save(Self.login(count + 1), for: key)
                            inside.withLock { $0.now -= 1 }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = inside.withLock { $0 }
        guard seen.most == 1 else { throw Broken("\(seen.most) tasks were inside the lock at once") }
        let count = try await makeStore().load(key)?.attributes["check"]
        guard count == "30" else { throw Broken("30 locked increments left the count at \(count ?? "nothing")") }
        try await makeStore().delete(key)
    }

    func lockReleases() async throws {
        let store = try await makeStore()
        struct Refused: Error {}
        guard try await store.withLock(key(), { 42 }) == 42 else { throw Broken("withLock did not return its body's value") }
        do {
            _ = try await store.withLock(key()) { throw Refused() }
            throw Broken("withLock swallowed its body's error")
        } catch is Refused {}
        let again = try await within(TokenStoreConformance.waitLimit, "the lock was not released after a body threw") {
            try await store.withLock(key()) { 7 }
        }
        guard again == 7 else { throw Broken("withLock after a throwing body returned \(again)") }
    }

    func locksPerKey() async throws {
        let store = try await makeStore(), other = try await makeStore()
        try await holding(key("first"), in: store) {
            _ = try await within(TokenStoreConformance.waitLimit, "another key's lock waited for the first key's") {
                try await other.withLock(key("second")) { 1 }
            }
        }
    }

    func lockHandsOver() async throws {
        let store = try await makeStore(), other = try await makeStore()
        let holderDone = Shared(false)
        let entered: Bool = try await holding(key(), in: store, before: { holderDone.withLock { $0 = true } }) { release in
            let waiter = Task { try await other.withLock(key()) { holderDone.withLock { $0 } } }
            release()
            return try await within(TokenStoreConformance.waitLimit, "the waiter never got the lock") { try await waiter.value }
        }
        guard entered else { throw Broken("a waiter entered while the holder's body was still running") }
    }

    // MARK: Plumbing

    /// Runs `body` while a task holds `key`'s lock in `store`; the lock is released after `body`.
    func holding(_ key: TokenStoreKey, in store: any TokenStore, _ body: () async throws -> Void) async throws {
        _ = try await holding(key, in: store, before: {}) { release in
            defer { release() }
            try await body()
            return true
        }
    }

    /// Runs `body` while a task holds `key`'s lock in `store`. `body` gets a function that lets the
    /// holder go: it runs `before`, then returns from its lock.
    func holding<T: Sendable>(
        _ key: TokenStoreKey, in store: any TokenStore, before: @escaping @Sendable () -> Void,
        _ body: (_ release: @escaping @Sendable () -> Void) async throws -> T
    ) async throws -> T {
        let (held, holdingNow) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await store.withLock(key) {
                holdingNow.yield()
                for await _ in release { break }
                before()
            }
        }
        let gotLock = try await within(TokenStoreConformance.waitLimit, "the lock of a free key was never granted") {
            for await _ in held { return true }
            return false
        }
        guard gotLock else {
            _ = try await holder.value
            throw Broken("the holder's lock ended before it was held")
        }
        let result: T
        do {
            result = try await body { releasing.finish() }
        } catch {
            releasing.finish()
            try? await holder.value
            throw error
        }
        releasing.finish()
        try await holder.value
        return result
    }

    /// `work`'s result, or ``Broken`` with `message` when it takes longer than `limit` (then `work`
    /// is cancelled and left behind: a lock that is never granted may ignore cancellation).
    func within<T: Sendable>(_ limit: Duration, _ message: String, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = Shared<CheckedContinuation<T, any Error>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let worker = Task {
                let result = await Result(catching: { try await work() })
                outcome.withLock { $0.take() }?.resume(with: result)
            }
            Task {
                try? await Task.sleep(for: limit)
                guard let waiting = outcome.withLock({ $0.take() }) else { return }
                worker.cancel()
                waiting.resume(throwing: Broken(message + " within \(limit)"))
            }
        }
    }
}

/// A value behind a lock, shared by tasks.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}

extension Result where Failure == any Error {
    /// The outcome of `body`.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
