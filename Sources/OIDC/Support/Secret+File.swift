internal import Foundation

extension Secret {
    /// The largest secret file read: a client secret or a token, not a document.
    package static let maximumFileSize = 4096

    /// The secret held in the file at `path` (a client secret, say), without the whitespace and line
    /// breaks around it, read as ``JWSSigningKey/init(contentsOfFile:algorithm:keyID:)`` reads a key
    /// and `ssh` its keys: through one descriptor opened without following a link, and only from a
    /// regular file of yours (or root's) that no other user may read or write (`chmod 600`). A file
    /// others could read is no longer a secret, and one they could replace would send their secret
    /// to the provider.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` naming the path when there is no such file, it is
    ///   empty, or it is over 4096 bytes; ``OIDCError/Code/storageFailure`` when it is a
    ///   link, not a regular file, another user's, or open to others (the message says to `chmod 600`).
    ///
    /// A static function rather than an initializer, so that `map(Secret.init)` stays unambiguous.
    public static func fromFile(atPath path: String) throws(OIDCError) -> Secret {
        let context = ["path": path]
        let read: [UInt8]?
        do { read = try PrivateFile.readSecret(path, limit: Self.maximumFileSize) } catch where error.code == .corruptStore {
            throw OIDCError(.invalidArgument, "\(path) is over \(Self.maximumFileSize) bytes: it does not hold a secret.", context: context)
        }
        guard var bytes = read else { throw OIDCError(.invalidArgument, "There is no secret file at \(path).", context: context) }
        defer { LibCrypto.cleanse(&bytes) }
        let value = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw OIDCError(.invalidArgument, "The secret file \(path) is empty.", context: context) }
        return Secret(value)
    }
}
