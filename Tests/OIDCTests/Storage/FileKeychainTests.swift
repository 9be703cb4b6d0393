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
}

// MARK: - Helpers

/// Runs `body` with a store in a fresh temporary directory (`root/subpath`), removed afterwards.
func withStore(
    subpath: String = "store", _ body: (FileKeychain, URL) async throws -> Void
) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("FileKeychainTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let store = try FileKeychain(directory: root.appendingPathComponent(subpath))
    try await body(store, root)
}

func statInfo(_ path: String) -> stat? {
    var info = stat()
    return lstat(path, &info) == 0 ? info : nil
}

func mode(_ path: String) -> mode_t? {
    statInfo(path).map { $0.st_mode & 0o7777 }
}

/// The store's one data file.
func dataFile(_ store: FileKeychain) throws -> URL {
    let names = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).filter { $0.hasSuffix(".json") }
    try #require(names.count == 1, "\(names)")
    return store.directory.appendingPathComponent(names[0])
}

/// The login `oidc-store-writer` saves as `generation` (the same recipe as its main.swift).
func writerLogin(_ generation: String) -> StoredLogin {
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

/// The `oidc-store-writer` helper (killed after 30 s).
