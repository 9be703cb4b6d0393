internal import Foundation

/// Encryption of stored logins at rest: AES-256-GCM under a ring of ``TokenEncryptionKey``s.
///
/// New records are sealed with the ``current`` key; records sealed with any key of the ring
/// (current or previous) open. To rotate, make the new key current and keep the old one among the
/// previous keys until every record has been saved again (each save reseals with the current key);
/// then drop it.
///
/// ```swift
/// let encryption = try TokenEncryption(
///     current: TokenEncryptionKey(contentsOfFile: "/etc/myapp/token-2.key"),
///     previous: [TokenEncryptionKey(contentsOfFile: "/etc/myapp/token-1.key")])
/// let store = try FileKeychain(encryption: encryption)
/// ```
///
/// **Envelope.** A sealed record is one JSON object, members in this order, no whitespace:
///
/// ```
/// {"format":"oidc-sealed","version":1,"alg":"A256GCM","kid":"<key id>",
///  "iv":"<base64url, 12 bytes>","ciphertext":"<base64url>","tag":"<base64url, 16 bytes>"}
/// ```
///
/// base64url is unpadded (RFC 4648 §5). Reading is strict: exactly these members, canonical
/// base64url, a key id of 1 to 64 characters of `A-Z a-z 0-9 . _ -`. The plaintext is the
/// record's ordinary serialization (a stored login's JSON).
///
/// **Cryptography.** AES-256-GCM (NIST SP 800-38D) through OpenSSL's EVP interface, with a fresh
/// 96-bit IV from `RAND_bytes` for every seal (a failing generator is an error, never a fixed IV)
/// and a 128-bit tag. The additional authenticated data binds the header and the record's
/// identity:
///
/// ```
/// AAD = LP("oidc-sealed") ‖ LP("1") ‖ LP("A256GCM") ‖ LP(kid) ‖ LP(NFC(service)) ‖ LP(NFC(account))
/// ```
///
/// where `LP(x)` is the length of `x`'s UTF-8 as 4 bytes big-endian, then those bytes, and `NFC`
/// the Unicode canonical composition (``TokenStoreKey``s that Swift considers equal give equal
/// AAD). So a record copied under another key of the store, or whose `kid` or header was edited,
/// fails authentication like a changed byte of its IV, ciphertext or tag.
///
/// **What it protects.** Copies of the store without the key: backups, snapshots, a database dump,
/// a stolen disk. Not a process running as the same user, which can read the key wherever the
/// application reads it; and a store that accepts plain records (``FileKeychain`` does, to migrate)
/// does not prove that a record was written by someone holding the key.
public struct TokenEncryption: Sendable, CustomStringConvertible {
    /// The key that seals new records.
    public let current: TokenEncryptionKey
    /// Older keys, for opening records sealed before a rotation.
    public let previous: [TokenEncryptionKey]

    /// A ring sealing with `current` and opening records of `current` and `previous`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when two keys of the ring have the same id: a
    ///   record's `kid` must name one key.
    public init(current: TokenEncryptionKey, previous: [TokenEncryptionKey] = []) throws(OIDCError) {
        var seen: Set<String> = []
        for key in [current] + previous where !seen.insert(key.id).inserted {
            throw .invalidArgument("Two token encryption keys have the id \"\(key.id)\": each key of the ring needs its own id.")
        }
        self.current = current
        self.previous = previous
    }

    /// The ids of every key of the ring, the current one first.
    package var ringKeyIDs: [String] { [current.id] + previous.map(\.id) }

    /// `TokenEncryption(current: "…", previous: […])`: key ids only.
    public var description: String {
        "TokenEncryption(current: \"\(current.id)\", previous: [\(previous.map { "\"\($0.id)\"" }.joined(separator: ", "))])"
    }

    /// The key of the ring with this id.
    func key(withID id: String) -> TokenEncryptionKey? {
        id == current.id ? current : previous.first { $0.id == id }
    }

    // MARK: - Sealing

    static let format = "oidc-sealed"
    static let version = 1
    static let algorithm = "A256GCM"
    private static let members: Set<String> = ["format", "version", "alg", "kid", "iv", "ciphertext", "tag"]

    /// `plaintext` sealed with the current key for the record `record`: the envelope's bytes.
    ///
    /// - Throws: ``OIDCError/Code/randomFailure`` when no random IV can be drawn;
    ///   ``OIDCError/Code/cryptoFailure`` when OpenSSL fails.
    package func seal(_ plaintext: [UInt8], record: TokenStoreKey) throws(OIDCError) -> [UInt8] {
        let iv = try LibCrypto.randomBytes(count: AESGCM.ivByteCount)
        let sealed = try AESGCM.seal(plaintext, key: current.material, iv: iv, authenticating: Self.aad(kid: current.id, record: record))
        let envelope =
            #"{"format":"\#(Self.format)","version":\#(Self.version),"alg":"\#(Self.algorithm)","kid":"\#(current.id)","#
            + #""iv":"\#(Base64URLEncoding.encode(iv))","ciphertext":"\#(Base64URLEncoding.encode(sealed.ciphertext))","tag":"\#(Base64URLEncoding.encode(sealed.tag))"}"#
        return Array(envelope.utf8)
    }

    /// The plaintext of the envelope `sealed`, when it was sealed for `record` by a key of the ring.
    ///
    /// `location` names the record in messages (a path, a table and row); it must not be secret.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the record's key id is not in the ring (the
    ///   message names the id to add; context `record`, `kid`), or when it has a version or
    ///   algorithm this library does not know (a newer one wrote it).
    ///   ``OIDCError/Code/corruptStore`` when it fails authentication (it was changed, belongs to
    ///   another record, or was sealed by another key with the same id), or is not a well-formed
    ///   envelope (context `record`). No message contains key material or plaintext.
    package func open(_ sealed: [UInt8], record: TokenStoreKey, location: String) throws(OIDCError) -> [UInt8] {
        let envelope = try Self.parse(sealed, location: location)
        guard let key = key(withID: envelope.kid) else {
            throw OIDCError(
                .storageFailure,
                "The stored login at \(location) was encrypted with the key \"\(envelope.kid)\", which is not in the token encryption ring (\(ringKeyIDs.map { "\"\($0)\"" }.joined(separator: ", "))): add the key \"\(envelope.kid)\" to the ring's previous keys to read it, or log in again.",
                context: ["record": location, "kid": envelope.kid])
        }
        let opened = try AESGCM.open(
            envelope.ciphertext, tag: envelope.tag, key: key.material, iv: envelope.iv,
            authenticating: Self.aad(kid: envelope.kid, record: record))
        guard let opened else {
            throw OIDCError(
                .corruptStore,
                "The stored login at \(location) failed authentication with the key \"\(envelope.kid)\": it was changed, copied from another record, or sealed by a different key under the same id.",
                context: ["record": location, "kid": envelope.kid])
        }
        return opened
    }

    /// The id of the key that sealed `sealed`, read without decrypting; `nil` when `sealed` is not
    /// an envelope or its `kid` is malformed.
    package static func keyID(of sealed: [UInt8]) -> String? {
        guard let object = envelopeObject(sealed), case .string(let kid)? = object["kid"], TokenEncryptionKey.isValidID(kid) else { return nil }
        return kid
    }

    /// Whether `bytes` claim to be an envelope: a JSON object whose `format` is `oidc-sealed`
    /// (well-formed or not otherwise). A plain stored login never is.
    package static func isSealed(_ bytes: [UInt8]) -> Bool { envelopeObject(bytes) != nil }

    private static func envelopeObject(_ bytes: [UInt8]) -> [String: JSONValue]? {
        guard let object = try? StrictJSONParser.parseObject(bytes), object["format"]?.stringValue == format else { return nil }
        return object
    }

    /// `LP(format) ‖ LP(version) ‖ LP(alg) ‖ LP(kid) ‖ LP(NFC(service)) ‖ LP(NFC(account))`.
    static func aad(kid: String, record: TokenStoreKey) -> [UInt8] {
        var aad: [UInt8] = []
        for field in [format, String(version), algorithm, kid, record.service.precomposedStringWithCanonicalMapping, record.account.precomposedStringWithCanonicalMapping] {
            let bytes = Array(field.utf8)
            let length = UInt32(truncatingIfNeeded: bytes.count)
            aad += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            aad += bytes
        }
        return aad
    }

    private struct Envelope {
        let kid: String
        let iv: [UInt8]
        let ciphertext: [UInt8]
        let tag: [UInt8]
    }

    private static func parse(_ bytes: [UInt8], location: String) throws(OIDCError) -> Envelope {
        func malformed(_ reason: String) -> OIDCError {
            OIDCError(.corruptStore, "The stored login at \(location) is not a readable encrypted record: \(reason).", context: ["record": location])
        }
        guard let object = envelopeObject(bytes) else { throw malformed("not a JSON object with format \"\(format)\"") }
        guard case .number(let version)? = object["version"], version.isFinite, version == version.rounded(), version >= 1 else {
            throw malformed("no valid version")
        }
        guard version == Double(Self.version) else {
            throw OIDCError(
                .storageFailure,
                "The stored login at \(location) is encrypted in format version \(Int(exactly: version).map(String.init) ?? "?"), which this version of the library does not know; a newer version wrote it. Upgrade, or use another store.",
                context: ["record": location])
        }
        guard Set(object.keys) == members else { throw malformed("its members are not exactly \(members.sorted().joined(separator: ", "))") }
        guard case .string(let algorithm)? = object["alg"] else { throw malformed("alg is not a string") }
        guard algorithm == Self.algorithm else {
            // Not echoed: the text is untrusted, and any value but ours means the same thing here.
            throw OIDCError(
                .storageFailure,
                "The stored login at \(location) is encrypted with an algorithm other than \(Self.algorithm), which this version of the library does not know; a newer version wrote it. Upgrade, or use another store.",
                context: ["record": location])
        }
        guard case .string(let kid)? = object["kid"], TokenEncryptionKey.isValidID(kid) else {
            throw malformed("kid is not 1 to 64 characters of A-Z a-z 0-9 . _ -")
        }
        func decoded(_ name: String, count: Int? = nil) throws(OIDCError) -> [UInt8] {
            guard case .string(let text)? = object[name], let decoded = Base64URLEncoding.decode(text) else { throw malformed("\(name) is not base64url") }
            if let count, decoded.count != count { throw malformed("\(name) is not \(count) bytes") }
            return decoded
        }
        return Envelope(
            kid: kid, iv: try decoded("iv", count: AESGCM.ivByteCount), ciphertext: try decoded("ciphertext"),
            tag: try decoded("tag", count: AESGCM.tagByteCount))
    }
}
