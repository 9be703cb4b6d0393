/// How ``FileKeychain`` reads and writes data files when ``FileKeychain/encryption`` may be set:
/// plain JSON, or a ``TokenEncryption`` envelope.
extension FileKeychain {
    /// What a save should do with the data file it is about to replace.
    enum Replaced: Equatable {
        /// A login this store can read: replace it.
        case readable
        /// Not a login, or a sealed record that fails authentication: keep it as `.corrupt-<time>`.
        case corrupt
        /// A sealed record this store cannot open (no encryption configured, a key not in the ring,
        /// a newer format): keep it as `.sealed-<time>`, so that it can be read once the key is back.
        case sealedUnreadable

        /// The suffix of the moved-aside copy's name.
        var asideSuffix: String? {
            switch self {
            case .readable: nil
            case .corrupt: "corrupt"
            case .sealedUnreadable: "sealed"
            }
        }
    }

    /// The bytes to write for `login`: its JSON, or that JSON sealed for `key` when encryption is
    /// configured. The plaintext scratch copy is wiped.
    func encode(_ login: StoredLogin, for key: TokenStoreKey) throws(OIDCError) -> [UInt8] {
        var plaintext = try login.serialized()
        guard let encryption else { return plaintext }
        defer { LibCrypto.cleanse(&plaintext) }
        return try encryption.seal(plaintext, record: key)
    }

    /// The login in a data file's bytes: plain JSON (read with or without encryption, so that
    /// existing stores migrate), or an envelope opened with the ring.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` for an envelope when no encryption is configured
    ///   or its key is not in the ring; ``OIDCError/Code/corruptStore`` when it fails
    ///   authentication or is malformed; the errors of ``StoredLogin/init(serialized:path:)``.
    func decode(_ bytes: [UInt8], for key: TokenStoreKey, path: String) throws(OIDCError) -> StoredLogin {
        guard TokenEncryption.isSealed(bytes) else { return try StoredLogin(serialized: bytes, path: path) }
        guard let encryption else {
            var context = ["path": path]
            let kid = TokenEncryption.keyID(of: bytes)
            context["kid"] = kid
            throw OIDCError(
                .storageFailure,
                "The stored login at \(path) is encrypted\(kid.map { " with the key \"\($0)\"" } ?? ""); configure the key: give the store a TokenEncryption that holds it (FileKeychain(directory:lockTimeout:encryption:)).",
                context: context)
        }
        var plaintext = try open(bytes, with: encryption, for: key, path: path)
        defer { LibCrypto.cleanse(&plaintext) }
        return try StoredLogin(serialized: plaintext, path: path)
    }

    /// ``TokenEncryption/open(_:record:location:)``, with the path in the error's context.
    private func open(_ bytes: [UInt8], with encryption: TokenEncryption, for key: TokenStoreKey, path: String) throws(OIDCError) -> [UInt8] {
        do {
            return try encryption.open(bytes, record: key, location: path)
        } catch {
            throw OIDCError(error.code, error.message, context: error.context.merging(["path": path]) { $1 })
        }
    }

    /// What a save does with the existing data file `bytes` (`nil`: too large to be a login).
    func classifyReplaced(_ bytes: [UInt8]?, for key: TokenStoreKey, path: String) -> Replaced {
        guard let bytes else { return .corrupt }
        do {
            _ = try decode(bytes, for: key, path: path)
            return .readable
        } catch {
            guard TokenEncryption.isSealed(bytes), error.code != .corruptStore else { return .corrupt }
            return .sealedUnreadable
        }
    }
}
