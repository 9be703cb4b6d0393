import Foundation
import OIDC
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("TokenEncryption: logins sealed at rest with AES-256-GCM")
struct TokenEncryptionTests {
    /// 00 01 02 … 1f: its SHA-256 starts 630dcd2966c43366 (computed independently, with Python's hashlib).
    static let countingBytes = (0..<32).map(UInt8.init)
    static let record = TokenStoreKey(service: "com.schibsted.account", account: "client-1")
    static let plaintext = Array(#"{"tokens":{"access_token":"access-secret-1","refresh_token":"refresh-secret-1"}}"#.utf8)

    static func key(_ fill: UInt8, id: String? = nil) throws -> TokenEncryptionKey {
        try TokenEncryptionKey(id: id, bytes: (0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 7 + Int(fill)) })
    }

    static func ring(_ current: TokenEncryptionKey, _ previous: TokenEncryptionKey...) throws -> TokenEncryption {
        try TokenEncryption(current: current, previous: previous)
    }

    // MARK: The primitive

    struct GCMCase: Sendable, CustomStringConvertible {
        let name: String, key: String, iv: String, plaintext: String, aad: String, ciphertext: String, tag: String
        var description: String { name }
    }

    /// McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)", appendix B: the 256-bit-key cases.
    static let gcmSpecCases: [GCMCase] = {
        let key15 = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
        let plaintext15 =
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
        let ciphertext15 =
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
        return [
            GCMCase(
                name: "test case 13", key: String(repeating: "00", count: 32), iv: String(repeating: "00", count: 12), plaintext: "", aad: "",
                ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b"),
            GCMCase(
                name: "test case 14", key: String(repeating: "00", count: 32), iv: String(repeating: "00", count: 12),
                plaintext: String(repeating: "00", count: 16), aad: "", ciphertext: "cea7403d4d606b6e074ec5d3baf39d18",
                tag: "d0d1c8a799996bf0265b98b5d48ab919"),
            GCMCase(
                name: "test case 15", key: key15, iv: "cafebabefacedbaddecaf888", plaintext: plaintext15, aad: "", ciphertext: ciphertext15,
                tag: "b094dac5d93471bdec1a502270e3cc6c"),
            GCMCase(
                name: "test case 16", key: key15, iv: "cafebabefacedbaddecaf888", plaintext: String(plaintext15.dropLast(8)),
                aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2", ciphertext: String(ciphertext15.dropLast(8)),
                tag: "76fc6ece0f4e1768cddf8853bb2d551b"),
        ]
    }()

    @Test("AES-256-GCM reproduces the GCM specification's 256-bit test cases 13 to 16, and refuses each with a flipped bit",
          arguments: gcmSpecCases)
    func gcmKnownAnswers(_ vector: GCMCase) throws {
        let key = KeyBytes(copying: hexBytes(vector.key))
        let iv = hexBytes(vector.iv), aad = hexBytes(vector.aad)
        let sealed = try AESGCM.seal(hexBytes(vector.plaintext), key: key, iv: iv, authenticating: aad)
        #expect(sealed.ciphertext == hexBytes(vector.ciphertext))
        #expect(sealed.tag == hexBytes(vector.tag))
        let opened = try AESGCM.open(hexBytes(vector.ciphertext), tag: hexBytes(vector.tag), key: key, iv: iv, authenticating: aad)
        #expect(opened == hexBytes(vector.plaintext))

        var tag = hexBytes(vector.tag)
        tag[15] ^= 0x01
        #expect(try AESGCM.open(hexBytes(vector.ciphertext), tag: tag, key: key, iv: iv, authenticating: aad) == nil)
        var otherIV = iv
        otherIV[0] ^= 0x80
        #expect(try AESGCM.open(hexBytes(vector.ciphertext), tag: hexBytes(vector.tag), key: key, iv: otherIV, authenticating: aad) == nil)
        #expect(try AESGCM.open(hexBytes(vector.ciphertext), tag: hexBytes(vector.tag), key: key, iv: iv, authenticating: aad + [0]) == nil)
        if !vector.ciphertext.isEmpty {
            var ciphertext = hexBytes(vector.ciphertext)
            ciphertext[ciphertext.count - 1] ^= 0x01
            #expect(try AESGCM.open(ciphertext, tag: hexBytes(vector.tag), key: key, iv: iv, authenticating: aad) == nil)
        }
    }

    @Test("the primitive refuses keys, IVs and tags of the wrong length")
    func gcmLengths() throws {
        let key = KeyBytes(copying: Self.countingBytes)
        for (badKey, iv) in [(KeyBytes(copying: Array(Self.countingBytes.prefix(16))), [UInt8](repeating: 0, count: 12)), (key, [UInt8](repeating: 0, count: 16))] {
            let error = try #require(throws: OIDCError.self) { try AESGCM.seal([1], key: badKey, iv: iv, authenticating: []) }
            #expect(error.code == .invalidArgument)
        }
        let error = try #require(throws: OIDCError.self) {
            try AESGCM.open([1], tag: [UInt8](repeating: 0, count: 12), key: key, iv: [UInt8](repeating: 0, count: 12), authenticating: [])
        }
        #expect(error.code == .invalidArgument)
    }

    // MARK: Sealing and opening

    @Test("a sealed record opens to its plaintext; the envelope names its key and each seal draws a fresh IV")
    func roundTrip() throws {
        let key = try Self.key(1, id: "k1")
        let ring = try Self.ring(key)
        let first = try ring.seal(Self.plaintext, record: Self.record)
        let second = try ring.seal(Self.plaintext, record: Self.record)
        #expect(try ring.open(first, record: Self.record, location: "test") == Self.plaintext)
        #expect(try ring.open(second, record: Self.record, location: "test") == Self.plaintext)
        #expect(try ring.open(ring.seal([], record: Self.record), record: Self.record, location: "test") == [])

        let envelope = try Envelope(first)
        let other = try Envelope(second)
        #expect(envelope.bytes("iv").count == 12 && envelope.bytes("tag").count == 16)
        #expect(envelope.bytes("ciphertext").count == Self.plaintext.count)
        #expect(envelope.bytes("iv") != other.bytes("iv") && envelope.bytes("ciphertext") != other.bytes("ciphertext"))
        #expect(envelope.object["format"] as? String == "oidc-sealed")
        #expect(envelope.object["version"] as? Int == 1)
        #expect(envelope.object["alg"] as? String == "A256GCM")
        #expect(Set(envelope.object.keys) == ["format", "version", "alg", "kid", "iv", "ciphertext", "tag"])
        #expect(String(decoding: first, as: UTF8.self).hasPrefix(#"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k1","iv":""#))

        #expect(TokenEncryption.keyID(of: first) == "k1")
        #expect(TokenEncryption.isSealed(first))
        #expect(!TokenEncryption.isSealed(Self.plaintext))
        #expect(!TokenEncryption.isSealed(Array("not json".utf8)))
        #expect(TokenEncryption.keyID(of: Self.plaintext) == nil)
        for token in ["access-secret-1", "refresh-secret-1", "access_token"] {
            #expect(!String(decoding: first, as: UTF8.self).contains(token))
        }
    }

    @Test("after rotation a record of the previous key opens, and the next seal uses the new current key")
    func rotation() throws {
        let old = try Self.key(1), new = try Self.key(2)
        #expect(old.id != new.id)
        let before = try Self.ring(old)
        let sealedBefore = try before.seal(Self.plaintext, record: Self.record)
        #expect(TokenEncryption.keyID(of: sealedBefore) == old.id)

        let rotated = try Self.ring(new, old)
        #expect(rotated.ringKeyIDs == [new.id, old.id])
        #expect(try rotated.open(sealedBefore, record: Self.record, location: "test") == Self.plaintext)
        let resealed = try rotated.seal(Self.plaintext, record: Self.record)
        #expect(TokenEncryption.keyID(of: resealed) == new.id)

        // The old key alone cannot read the new record: it names the key it lacks.
        let error = try #require(throws: OIDCError.self) { try before.open(resealed, record: Self.record, location: "test") }
        #expect(error.code == .storageFailure && error.context["kid"] == new.id, "\(error)")
        // Once the old key is dropped, the new ring still reads what it wrote.
        #expect(try Self.ring(new).open(resealed, record: Self.record, location: "test") == Self.plaintext)
    }

    @Test("a flipped bit anywhere in the IV, the ciphertext or the tag fails authentication")
    func flippedBits() throws {
        let ring = try Self.ring(Self.key(1, id: "k1"))
        let sealed = try ring.seal(Array("tiny record 1234".utf8), record: Self.record)
        let envelope = try Envelope(sealed)
        var checked = 0
        for field in ["iv", "ciphertext", "tag"] {
            let original = envelope.bytes(field)
            for index in original.indices {
                for bit in 0..<8 {
                    var changed = original
                    changed[index] ^= UInt8(1) << bit
                    let tampered = envelope.replacing(field, with: Base64URL.encode(changed))
                    let error = try #require(throws: OIDCError.self, "\(field)[\(index)] bit \(bit)") {
                        try ring.open(tampered, record: Self.record, location: "the record")
                    }
                    #expect(error.code == .corruptStore && error.message.contains("failed authentication"), "\(field)[\(index)] bit \(bit): \(error)")
                    checked += 1
                }
            }
        }
        #expect(checked == (12 + 16 + 16) * 8)
    }

    @Test("every byte of the envelope's text changed gives a typed error, never a plaintext")
    func changedEnvelopeBytes() throws {
        let ring = try Self.ring(Self.key(1, id: "k1"), Self.key(2, id: "k0"))
        let sealed = try ring.seal(Array("tiny".utf8), record: Self.record)
        for index in sealed.indices {
            for change: UInt8 in [0x01, 0x20] {
                var tampered = sealed
                tampered[index] ^= change
                do {
                    let opened = try ring.open(tampered, record: Self.record, location: "the record")
                    Issue.record("byte \(index) ^ \(change) opened to \(opened.count) bytes")
                } catch {
                    #expect(error.code == .corruptStore || error.code == .storageFailure, "byte \(index): \(error)")
                    #expect(error.message.contains("the record"), "byte \(index): \(error)")
                }
            }
        }
    }

    @Test("a record whose kid names another key of the ring (even one with the same bytes), or sealed by another key under the same id, fails authentication")
    func wrongKey() throws {
        let ring = try Self.ring(Self.key(1, id: "one"), Self.key(2, id: "two"))
        let sealed = try ring.seal(Self.plaintext, record: Self.record)
        let relabelled = try Envelope(sealed).replacing("kid", with: "two")
        let error = try #require(throws: OIDCError.self) { try ring.open(relabelled, record: Self.record, location: "the record") }
        #expect(error.code == .corruptStore && error.message.contains("failed authentication"), "\(error)")

        // The same key bytes under two ids: only the AAD's kid tells them apart.
        let twins = try Self.ring(Self.key(1, id: "one"), Self.key(1, id: "twin"))
        let relabelledTwin = try Envelope(sealed).replacing("kid", with: "twin")
        let twin = try #require(throws: OIDCError.self) { try twins.open(relabelledTwin, record: Self.record, location: "the record") }
        #expect(twin.code == .corruptStore && twin.message.contains("failed authentication"), "\(twin)")
        #expect(try twins.open(sealed, record: Self.record, location: "the record") == Self.plaintext)

        let impostor = try Self.ring(Self.key(3, id: "one"))
        let wrong = try #require(throws: OIDCError.self) { try impostor.open(sealed, record: Self.record, location: "the record") }
        #expect(wrong.code == .corruptStore && wrong.message.contains("failed authentication"), "\(wrong)")
        #expect(wrong.context["record"] == "the record" && wrong.context["kid"] == "one")
    }

    @Test("a record moved to another service or account fails authentication; a canonically equal key opens it")
    func boundToRecord() throws {
        let ring = try Self.ring(Self.key(1))
        let record = TokenStoreKey(service: "ab", account: "caf\u{E9}")
        let sealed = try ring.seal(Self.plaintext, record: record)
        for other in [
            TokenStoreKey(service: "ab", account: "cafe"), TokenStoreKey(service: "a", account: "bcaf\u{E9}"),
            TokenStoreKey(service: "abc", account: "af\u{E9}"), TokenStoreKey(service: "caf\u{E9}", account: "ab"),
            TokenStoreKey(service: "ab\u{0}", account: "caf\u{E9}"),
        ] {
            let error = try #require(throws: OIDCError.self, "\(other)") { try ring.open(sealed, record: other, location: "moved") }
            #expect(error.code == .corruptStore && error.message.contains("failed authentication"), "\(other): \(error)")
        }
        let decomposed = TokenStoreKey(service: "ab", account: "cafe\u{301}")
        #expect(try ring.open(sealed, record: decomposed, location: "nfd") == Self.plaintext)
    }

    @Test("an unknown key id is a storageFailure that names the record and the key id to add to the ring")
    func unknownKeyID() throws {
        let sealed = try Self.ring(Self.key(1, id: "retired-2024")).seal(Self.plaintext, record: Self.record)
        let ring = try Self.ring(Self.key(2, id: "current-2025"))
        let error = try #require(throws: OIDCError.self) { try ring.open(sealed, record: Self.record, location: "/store/x.json") }
        #expect(error.code == .storageFailure && error.category == .storage)
        #expect(error.message.contains("/store/x.json") && error.message.contains("\"retired-2024\"") && error.message.contains("add"), "\(error)")
        #expect(error.context["record"] == "/store/x.json" && error.context["kid"] == "retired-2024")
    }

    static let malformedEnvelopes: [(String, String)] = [
        ("extra member", #"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k1","iv":"AAAAAAAAAAAAAAAA","ciphertext":"","tag":"AAAAAAAAAAAAAAAAAAAAAA","x":1}"#),
        ("missing tag", #"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k1","iv":"AAAAAAAAAAAAAAAA","ciphertext":""}"#),
        ("11-byte IV", #"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k1","iv":"AAAAAAAAAAAAAAA","ciphertext":"","tag":"AAAAAAAAAAAAAAAAAAAAAA"}"#),
        ("padded base64", #"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k1","iv":"AAAAAAAAAAAAAAAA","ciphertext":"","tag":"AAAAAAAAAAAAAAAAAAAAAA=="}"#),
        ("kid with a slash", #"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k/1","iv":"AAAAAAAAAAAAAAAA","ciphertext":"","tag":"AAAAAAAAAAAAAAAAAAAAAA"}"#),
        ("version as a string", #"{"format":"oidc-sealed","version":"1","alg":"A256GCM","kid":"k1","iv":"AAAAAAAAAAAAAAAA","ciphertext":"","tag":"AAAAAAAAAAAAAAAAAAAAAA"}"#),
        ("duplicate member", #"{"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"k1","kid":"k1","iv":"AAAAAAAAAAAAAAAA","ciphertext":"","tag":"AAAAAAAAAAAAAAAAAAAAAA"}"#),
        ("not sealed at all", #"{"version":1}"#),
    ]

    @Test("malformed envelopes are corruptStore errors naming the record; a newer version or algorithm is a storageFailure")
    func malformedEnvelopes() throws {
        let ring = try Self.ring(Self.key(1, id: "k1"))
        for (name, text) in Self.malformedEnvelopes {
            let error = try #require(throws: OIDCError.self, "\(name)") { try ring.open(Array(text.utf8), record: Self.record, location: "the record") }
            #expect(error.code == .corruptStore && error.message.contains("the record"), "\(name): \(error)")
            #expect(error.context["record"] == "the record")
        }
        let sealed = try ring.seal(Self.plaintext, record: Self.record)
        for (member, value) in [("version", "2"), ("alg", #""A128GCM""#)] {
            let newer = try Envelope(sealed).replacing(member, json: value)
            let error = try #require(throws: OIDCError.self) { try ring.open(newer, record: Self.record, location: "the record") }
            #expect(error.code == .storageFailure && error.message.contains("newer version"), "\(member): \(error)")
        }
    }

    @Test("a ring refuses two keys with the same id")
    func duplicateIDs() throws {
        let error = try #require(throws: OIDCError.self) { try Self.ring(Self.key(1, id: "same"), Self.key(2, id: "other"), Self.key(3, id: "same")) }
        #expect(error.code == .invalidArgument && error.message.contains("\"same\""), "\(error)")
        // Derived ids are fingerprints: one key twice is a duplicate too.
        #expect(throws: OIDCError.self) { try Self.ring(Self.key(1), Self.key(1)) }
    }

    // MARK: Keys

    @Test("a key parses from base64, base64url and hex, padded or not, with whitespace around; its default id is its fingerprint")
    func keyForms() throws {
        let forms = [
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
            "  AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F\r\n",
        ]
        for form in forms {
            let key = try TokenEncryptionKey(encoded: form)
            #expect(key.id == "630dcd2966c43366", "\(form)")
        }
        #expect(try TokenEncryptionKey(bytes: Self.countingBytes).id == "630dcd2966c43366")
        #expect(try TokenEncryptionKey(id: "prod-2025.1_a", encoded: forms[0]).id == "prod-2025.1_a")

        // Both alphabets decode to the same key (fb ff 00 01 …); they open each other's records.
        let standard = try TokenEncryptionKey(id: "k", encoded: "+/8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0=")
        let urlSafe = try TokenEncryptionKey(id: "k", encoded: "-_8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0")
        let sealed = try TokenEncryption(current: standard).seal(Self.plaintext, record: Self.record)
        #expect(try TokenEncryption(current: urlSafe).open(sealed, record: Self.record, location: "test") == Self.plaintext)
    }

    static let badKeyTexts: [(String, String)] = [
        ("16 bytes of base64", "AAECAwQFBgcICQoLDA0ODw=="),
        ("33 bytes of base64", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"),
        ("62 hex digits", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e"),
        ("64 characters, not hex", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1g"),
        ("mixed alphabets", "+/8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobH_0="),
        ("incomplete padding", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=="),
        ("inner whitespace", "AAECAwQFBgcICQoLDA0O DxAREhMUFRYXGBkaGxwdHh8="),
        ("empty", "  \n"),
    ]

    @Test("keys of the wrong length or in no known form, and malformed ids, are refused without echoing them")
    func badKeys() throws {
        for (name, text) in Self.badKeyTexts {
            let error = try #require(throws: OIDCError.self, "\(name)") { try TokenEncryptionKey(encoded: text) }
            #expect(error.code == .invalidArgument, "\(name)")
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { #expect(!error.description.contains(trimmed.prefix(12)), "\(name): \(error)") }
        }
        for count in [0, 16, 31, 33, 64] {
            let error = try #require(throws: OIDCError.self) { try TokenEncryptionKey(bytes: [UInt8](repeating: 7, count: count)) }
            #expect(error.code == .invalidArgument && error.message.contains("\(count)"), "\(error)")
        }
        for id in ["", String(repeating: "a", count: 65), "has space", "slash/", "ünï", "quote\"", "new\nline"] {
            let error = try #require(throws: OIDCError.self, "\(id)") { try TokenEncryptionKey(id: id, bytes: Self.countingBytes) }
            #expect(error.code == .invalidArgument, "\(id)")
        }
        #expect(try TokenEncryptionKey(id: String(repeating: "a", count: 64), bytes: Self.countingBytes).id.count == 64)
    }

    @Test("a key file readable or writable by group or others is refused with chmod 600; a private one is read")
    func keyFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("TokenEncryptionTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("token.key").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n".utf8)))

        #expect(chmod(path, 0o600) == 0)
        #expect(try TokenEncryptionKey(contentsOfFile: path).id == "630dcd2966c43366")
        #expect(try TokenEncryptionKey(contentsOfFile: path, id: "file-key").id == "file-key")
        #expect(chmod(path, 0o400) == 0)
        #expect(try TokenEncryptionKey(contentsOfFile: path).id == "630dcd2966c43366")

        for mode: mode_t in [0o640, 0o604, 0o620, 0o602, 0o644] {
            #expect(chmod(path, mode) == 0)
            let error = try #require(throws: OIDCError.self, "\(String(mode, radix: 8))") { try TokenEncryptionKey(contentsOfFile: path) }
            #expect(error.code == .storageFailure && error.message.contains("chmod 600 \(path)"), "\(error)")
            #expect(error.context["path"] == path)
            #expect(!error.description.contains("AAECAwQF"))
        }
        #expect(chmod(path, 0o600) == 0)

        let link = directory.appendingPathComponent("link.key").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let linked = try #require(throws: OIDCError.self) { try TokenEncryptionKey(contentsOfFile: link) }
        #expect(linked.code == .storageFailure && linked.message.contains("symbolic link"), "\(linked)")

        let missing = try #require(throws: OIDCError.self) { try TokenEncryptionKey(contentsOfFile: directory.appendingPathComponent("none").path) }
        #expect(missing.code == .storageFailure && missing.message.contains("none"), "\(missing)")

        let bad = directory.appendingPathComponent("bad.key").path
        #expect(FileManager.default.createFile(atPath: bad, contents: Data("c2hvcnQ=".utf8), attributes: [.posixPermissions: 0o600]))
        let content = try #require(throws: OIDCError.self) { try TokenEncryptionKey(contentsOfFile: bad) }
        #expect(content.code == .invalidArgument && content.message.contains(bad) && !content.message.contains("c2hvcnQ"), "\(content)")
    }

    @Test("a key from an environment variable; an unset or malformed one is an invalidArgument naming the variable, not the value")
    func keyFromEnvironment() throws {
        let environment = ["OIDC_TOKEN_KEY": "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n", "SHORT": "c2hvcnQ=", "EMPTY": ""]
        #expect(try TokenEncryptionKey(environmentVariable: "OIDC_TOKEN_KEY", environment: environment).id == "630dcd2966c43366")
        #expect(try TokenEncryptionKey(environmentVariable: "OIDC_TOKEN_KEY", id: "env", environment: environment).id == "env")
        for name in ["MISSING", "EMPTY", "SHORT"] {
            let error = try #require(throws: OIDCError.self, "\(name)") { try TokenEncryptionKey(environmentVariable: name, environment: environment) }
            #expect(error.code == .invalidArgument && error.message.contains(name), "\(error)")
            #expect(!error.description.contains("c2hvcnQ"))
        }
    }

    @Test("a key and a ring print, debug-print and dump their ids only, never the key bytes in hex or base64")
    func redaction() throws {
        let key = try TokenEncryptionKey(id: "visible-id", bytes: Self.countingBytes)
        let ring = try TokenEncryption(current: key, previous: [Self.key(9, id: "older")])
        var dumpedKey = "", dumpedRing = ""
        dump(key, to: &dumpedKey)
        dump(ring, to: &dumpedRing)
        let texts = [
            String(describing: key), String(reflecting: key), "\(key)", dumpedKey, String(describing: ring), String(reflecting: ring), dumpedRing,
            String(describing: Mirror(reflecting: key).children.map(\.value)),
        ]
        let forbidden = [
            "000102030405", "AAECAwQFBgcI", "0, 1, 2, 3", "1, 2, 3, 4", "1 2 3",
            // The other key: bytes 9, 16, 23, …
            "9, 16, 23", "091017",
        ]
        for text in texts {
            for pattern in forbidden { #expect(!text.contains(pattern), "\(pattern) in \(text)") }
        }
        #expect(String(describing: key) == #"TokenEncryptionKey(id: "visible-id")"#)
        #expect(dumpedKey.contains("visible-id") && dumpedRing.contains("older"))
        #expect(String(describing: ring) == #"TokenEncryption(current: "visible-id", previous: ["older"])"#)
    }
}

/// An envelope taken apart, and put back together with one member changed.
private struct Envelope {
    let object: [String: Any]

    init(_ sealed: [UInt8]) throws {
        object = try #require(try JSONSerialization.jsonObject(with: Data(sealed)) as? [String: Any])
    }

    func bytes(_ member: String) -> [UInt8] { Base64URL.decode(object[member] as? String ?? "") ?? [] }

    /// The envelope with `member` set to the string `value`, in the order the library writes.
    func replacing(_ member: String, with value: String) -> [UInt8] { replacing(member, json: "\"\(value)\"") }

    /// The envelope with `member` set to the JSON text `json`.
    func replacing(_ member: String, json: String) -> [UInt8] {
        let order = ["format", "version", "alg", "kid", "iv", "ciphertext", "tag"]
        let members = order.map { name -> String in
            if name == member { return "\"\(name)\":\(json)" }
            if let number = object[name] as? Int { return "\"\(name)\":\(number)" }
            return "\"\(name)\":\"\(object[name] as? String ?? "")\""
        }
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }
}
