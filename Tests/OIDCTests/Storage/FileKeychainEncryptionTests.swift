import Foundation
import OIDC
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("FileKeychain with encryption: logins sealed at rest")
struct FileKeychainEncryptionTests {
    static let key = TokenStoreKey.schibsted(clientID: "client-1")

    static func login(_ access: String = "access-token-1") -> StoredLogin {
        StoredLogin(
            tokens: TokenSet(
                accessToken: Secret(access), refreshToken: Secret("refresh-token-1"), idToken: Secret("id-token-1"),
                expiresAt: Date(timeIntervalSince1970: 1_800_003_600), scopes: ["openid"], receivedAt: Date(timeIntervalSince1970: 1_800_000_000)
            ),
            issuer: "https://login.example", clientID: "client-1", subject: "subject-1"
        )
    }

    static func encryption(_ fill: UInt8, id: String, previous: [TokenEncryptionKey] = []) throws -> TokenEncryption {
        try TokenEncryption(current: ringKey(fill, id: id), previous: previous)
    }

    static func ringKey(_ fill: UInt8, id: String) throws -> TokenEncryptionKey {
        try TokenEncryptionKey(id: id, bytes: [UInt8](repeating: fill, count: 32))
    }

    @Test("with encryption the file holds a sealed envelope and no token text, 0600; it loads back, also under a canonically equal key")
    func sealedOnDisk() async throws {
        try await withStores { directory in
            let store = try FileKeychain(directory: directory, encryption: Self.encryption(1, id: "k1"))
            try store.save(Self.login(), for: Self.key)
            let file = try dataFile(directory)
            let bytes = Array(try Data(contentsOf: file))
            #expect(TokenEncryption.isSealed(bytes) && TokenEncryption.keyID(of: bytes) == "k1")
            let text = String(decoding: bytes, as: UTF8.self)
            for secret in ["access-token-1", "refresh-token-1", "id-token-1", "subject-1", "login.example", "access_token"] {
                #expect(!text.contains(secret), "\(secret) is in the file")
            }
            var info = stat()
            #expect(lstat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(try store.load(Self.key) == Self.login())

            // A save over a valid sealed file replaces it: nothing is moved aside.
            try store.save(Self.login("access-token-2"), for: Self.key)
            #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-token-2"))
            #expect(try entries(directory) == [file.lastPathComponent])

            let decomposed = TokenStoreKey(service: "cafe\u{301}", account: "x")
            try store.save(Self.login("nfd"), for: decomposed)
            #expect(try store.load(TokenStoreKey(service: "caf\u{E9}", account: "x"))?.tokens.accessToken == Secret("nfd"))
        }
    }

    @Test("a plain store migrates: with encryption a plain file loads, and the next save writes it sealed")
    func migration() async throws {
        try await withStores { directory in
            try FileKeychain(directory: directory).save(Self.login(), for: Self.key)
            let file = try dataFile(directory)
            #expect(!TokenEncryption.isSealed(Array(try Data(contentsOf: file))))

            let store = try FileKeychain(directory: directory, encryption: Self.encryption(1, id: "k1"))
            #expect(try store.load(Self.key) == Self.login())
            try store.save(Self.login(), for: Self.key)
            let bytes = Array(try Data(contentsOf: file))
            #expect(TokenEncryption.keyID(of: bytes) == "k1")
            #expect(!String(decoding: bytes, as: UTF8.self).contains("access-token-1"))
            #expect(try store.load(Self.key) == Self.login())
            #expect(try entries(directory) == [file.lastPathComponent])
        }
    }

    @Test("after rotation a file sealed with the previous key loads, and the next save reseals it with the current key")
    func rotation() async throws {
        try await withStores { directory in
            try FileKeychain(directory: directory, encryption: Self.encryption(1, id: "k1")).save(Self.login(), for: Self.key)
            let rotated = try FileKeychain(directory: directory, encryption: Self.encryption(2, id: "k2", previous: [Self.ringKey(1, id: "k1")]))
            #expect(try rotated.load(Self.key) == Self.login())
            try rotated.save(Self.login(), for: Self.key)
            let file = try dataFile(directory)
            #expect(TokenEncryption.keyID(of: Array(try Data(contentsOf: file))) == "k2")
            #expect(try FileKeychain(directory: directory, encryption: Self.encryption(2, id: "k2")).load(Self.key) == Self.login())
            #expect(try entries(directory) == [file.lastPathComponent])
        }
    }

    @Test("a sealed file read without its key (no encryption, or a key id not in the ring) is a storageFailure naming the key, left in place; a save keeps it aside as .sealed-")
    func missingKey() async throws {
        try await withStores { directory in
            try FileKeychain(directory: directory, encryption: Self.encryption(1, id: "old-key")).save(Self.login(), for: Self.key)
            let file = try dataFile(directory)
            let sealed = try Data(contentsOf: file)

            for (name, store) in [
                ("no encryption", try FileKeychain(directory: directory)),
                ("another ring", try FileKeychain(directory: directory, encryption: Self.encryption(2, id: "new-key"))),
            ] {
                let error = try #require(throws: OIDCError.self, "\(name)") { try store.load(Self.key) }
                #expect(error.code == .storageFailure && error.message.contains("\"old-key\""), "\(name): \(error)")
                #expect(error.context["path"] == file.path && error.context["kid"] == "old-key", "\(name): \(error)")
                #expect(error.context["movedTo"] == nil)
                #expect(try Data(contentsOf: file) == sealed, "\(name)")
            }
            let plain = try #require(throws: OIDCError.self) { try FileKeychain(directory: directory).load(Self.key) }
            #expect(plain.message.contains("encrypted") && plain.message.contains("configure the key"), "\(plain)")

            // A new login saved by a store without that key keeps the old file rather than destroy it.
            let other = try FileKeychain(directory: directory, encryption: Self.encryption(2, id: "new-key"))
            try other.save(Self.login("access-token-2"), for: Self.key)
            #expect(try other.load(Self.key)?.tokens.accessToken == Secret("access-token-2"))
            let aside = try entries(directory).filter { $0.contains(".sealed-") }
            #expect(aside.count == 1 && aside[0].hasPrefix(file.lastPathComponent + ".sealed-"), "\(aside)")
            #expect(try Data(contentsOf: directory.appendingPathComponent(aside[0])) == sealed)
            #expect(try other.keys() == [Self.key])
        }
    }

    @Test("a tampered sealed file, or one copied under another key's name, is corruptStore: moved aside intact, and a save works")
    func tampered() async throws {
        try await withStores { directory in
            let store = try FileKeychain(directory: directory, encryption: Self.encryption(1, id: "k1"))
            let other = TokenStoreKey(service: "oidc", account: "other")
            try store.save(Self.login(), for: Self.key)
            try store.save(Self.login("other-access"), for: other)
            let files = try entries(directory).sorted()
            let target = directory.appendingPathComponent(try #require(files.first { $0.hasPrefix("com.schibsted.account") }))
            let source = directory.appendingPathComponent(try #require(files.first { $0.hasPrefix("oidc") }))

            // A changed byte of the ciphertext (still canonical base64url: a digit becomes another).
            var bytes = Array(try Data(contentsOf: target))
            let start = try #require(bytes.firstRange(of: Array(#""ciphertext":""#.utf8))).upperBound
            bytes[start + 5] = bytes[start + 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            for (name, content) in [("changed byte", Data(bytes)), ("copied from another key", try Data(contentsOf: source))] {
                try content.write(to: target)
                #expect(chmod(target.path, 0o600) == 0)
                let error = try #require(throws: OIDCError.self, "\(name)") { try store.load(Self.key) }
                #expect(error.code == .corruptStore && error.message.contains("failed authentication"), "\(name): \(error)")
                let movedTo = try #require(error.context["movedTo"], "\(name)")
                #expect(movedTo.hasPrefix(target.path + ".corrupt-") && error.context["path"] == target.path)
                #expect(try Data(contentsOf: URL(fileURLWithPath: movedTo)) == content)
                #expect(!error.description.contains("access-token-1") && !error.description.contains("other-access"))
                #expect(try store.load(Self.key) == nil)
                try FileManager.default.removeItem(atPath: movedTo)
            }

            // A save over a tampered file nobody loaded moves it aside too.
            try store.save(Self.login(), for: Self.key)
            try Data(bytes).write(to: target)
            try store.save(Self.login("access-token-3"), for: Self.key)
            #expect(try store.load(Self.key)?.tokens.accessToken == Secret("access-token-3"))
            let aside = try entries(directory).filter { $0.contains(".corrupt-") }
            #expect(aside.count == 1, "\(aside)")
            #expect(try store.load(other)?.tokens.accessToken == Secret("other-access"))
        }
    }
}

// MARK: - Helpers

/// Runs `body` with a fresh store directory (not yet created), removed afterwards.
private func withStores(_ body: (URL) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("FileKeychainEncryptionTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    try await body(root.appendingPathComponent("store"))
}

private func entries(_ directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasSuffix(".lock") }
}

/// The directory's one data file.
private func dataFile(_ directory: URL) throws -> URL {
    let names = try entries(directory).filter { $0.hasSuffix(".json") }
    try #require(names.count == 1, "\(names)")
    return directory.appendingPathComponent(names[0])
}
