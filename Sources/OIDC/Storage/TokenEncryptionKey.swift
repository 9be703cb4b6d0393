public import Foundation

/// A 256-bit AES key for ``TokenEncryption``, with the id stored beside every record it seals.
///
/// The id lets keys rotate: a record names the key that sealed it, and a ``TokenEncryption`` ring
/// finds that key among its current and previous ones. Without an explicit id, the key's own
/// fingerprint is used (the first 16 hex digits of SHA-256 of the key), so rotating needs no naming.
///
/// Generate a key with `openssl rand -base64 32 > token.key && chmod 600 token.key`, or
/// `openssl rand -hex 32`.
///
/// The key bytes are kept in memory of their own, wiped when the last copy of the key is released.
/// Printing, interpolating, dumping or mirroring a key shows its id only, never the bytes, and no
/// error ever contains them.
public struct TokenEncryptionKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key id, stored in clear with each record (`kid` in the envelope): 1 to 64 characters of
    /// `A-Z a-z 0-9 . _ -`. Not secret.
    public let id: String
    /// The 32 key bytes.
    package let material: KeyBytes

    /// A key from its 32 bytes.
    ///
    /// - Parameters:
    ///   - id: The key id, 1 to 64 characters of `A-Z a-z 0-9 . _ -`; `nil` for the key's
    ///     fingerprint (the first 16 hex digits of its SHA-256).
    ///   - bytes: Exactly 32 random bytes. Wipe your copy when done (the key keeps its own).
    /// - Throws: ``OIDCError/Code/invalidArgument`` when there are not exactly 32 bytes or the id is
    ///   malformed; the message never contains the bytes.
    public init(id: String? = nil, bytes: [UInt8]) throws(OIDCError) {
        guard bytes.count == AESGCM.keyByteCount else {
            throw .invalidArgument("A token encryption key must be \(AESGCM.keyByteCount) bytes (AES-256), not \(bytes.count).")
        }
        if let id {
            guard Self.isValidID(id) else {
                throw .invalidArgument(
                    "A token encryption key id must be 1 to 64 characters of A-Z a-z 0-9 . _ -; the one given (\(id.utf8.count) bytes) is not."
                )
            }
            self.id = id
        } else {
            self.id = try Hex.lowercase(LibCrypto.sha256(bytes).prefix(8))
        }
        material = KeyBytes(copying: bytes)
    }

    /// A key from text: 64 hex digits, or base64 of the 32 bytes (standard or URL-safe alphabet,
    /// padding optional). Whitespace and newlines around the text are ignored.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the text is neither, or does not decode to
    ///   32 bytes, or the id is malformed; the message never contains the text.
    public init(id: String? = nil, encoded: String) throws(OIDCError) {
        try self.init(id: id, encoded: encoded, source: "The token encryption key")
    }

    /// The key in the file at `path`, in any form ``init(id:encoded:)`` accepts.
    ///
    /// The file is opened without following a symbolic link and checked through the descriptor it
    /// is read from: it must be a regular file of yours (or root's) that neither group nor others
    /// can read or write, as `ssh` demands of private keys. A key others can read is no longer a
    /// secret, and one they can write could be replaced by theirs.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the file is missing, unreadable, a link,
    ///   not a regular file, someone else's, or open to group or others (the message says
    ///   `chmod 600`); ``OIDCError/Code/invalidArgument`` when its content is not a key.
    public init(contentsOfFile path: String, id: String? = nil) throws(OIDCError) {
        guard let bytes = try PrivateFile.readSecret(path, limit: 4096) else {
            throw OIDCError(.storageFailure, "There is no token encryption key file at \(path).", context: ["path": path])
        }
        var text = bytes
        defer { LibCrypto.cleanse(&text) }
        try self.init(id: id, encoded: String(decoding: text, as: UTF8.self), source: "The token encryption key file \(path)")
    }

    /// The key in the environment variable `name`, in any form ``init(id:encoded:)`` accepts.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the variable is unset or empty, or its
    ///   value is not a key; the message names the variable, never its value.
    public init(
        environmentVariable name: String, id: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OIDCError) {
        guard let value = environment[name], !value.allSatisfy(\.isWhitespace) else {
            throw .invalidArgument("The environment variable \(name) that should hold the token encryption key is not set.")
        }
        try self.init(id: id, encoded: value, source: "The token encryption key in $\(name)")
    }

    private init(id: String?, encoded: String, source: String) throws(OIDCError) {
        let text = encoded.trimmingCharacters(in: .whitespacesAndNewlines)
        guard var bytes = Self.decodeHex(text) ?? Self.decodeBase64(text) else {
            throw .invalidArgument(
                "\(source) is neither 64 hex digits nor base64 (\(text.count) characters): generate one with `openssl rand -base64 32`."
            )
        }
        defer { LibCrypto.cleanse(&bytes) }
        guard bytes.count == AESGCM.keyByteCount else {
            throw .invalidArgument("\(source) decodes to \(bytes.count) bytes, not \(AESGCM.keyByteCount): generate one with `openssl rand -base64 32`.")
        }
        try self.init(id: id, bytes: bytes)
    }

    /// `TokenEncryptionKey(id: "…")`: the id only.
    public var description: String { "TokenEncryptionKey(id: \"\(id)\")" }
    /// The same as ``description``: the id only.
    public var debugDescription: String { description }
    /// A mirror with the id as its only child, so `dump` and debuggers never show the bytes.
    public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }

    // MARK: - Parsing

    /// 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
    package static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    /// Exactly 64 hex digits (either case), or `nil`.
    private static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 2 * AESGCM.keyByteCount else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(AESGCM.keyByteCount)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else {
                LibCrypto.cleanse(&bytes)
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// Base64 in the standard (`+/`) or URL-safe (`-_`) alphabet, not both, with or without `=`
    /// padding (when present, it must be complete), canonical; or `nil`.
    private static func decodeBase64(_ text: String) -> [UInt8]? {
        var characters = Array(text.utf8)
        defer { LibCrypto.cleanse(&characters) }
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        guard padding == 0 || (padding <= 2 && (characters.count + padding) % 4 == 0) else { return nil }
        let standard = characters.contains(UInt8(ascii: "+")) || characters.contains(UInt8(ascii: "/"))
        let urlSafe = characters.contains(UInt8(ascii: "-")) || characters.contains(UInt8(ascii: "_"))
        guard !(standard && urlSafe) else { return nil }
        for index in characters.indices {
            if characters[index] == UInt8(ascii: "+") { characters[index] = UInt8(ascii: "-") }
            if characters[index] == UInt8(ascii: "/") { characters[index] = UInt8(ascii: "_") }
        }
        return Base64URLEncoding.decode(characters)
    }
}
