/// Unguessable, URL-safe values for `state` and `nonce`.
public enum RandomToken {
    /// The least randomness the generator will produce: 128 bits.
    package static let minimumByteCount = 16

    /// A base64url string of `byteCount` random bytes from OpenSSL's CSPRNG (by default 32: 256 bits, 43 characters).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` below 128 bits or above 1024 bytes.
    public static func generate(byteCount: Int = 32) throws(OIDCError) -> String {
        guard (minimumByteCount...1024).contains(byteCount) else {
            throw .invalidArgument(
                "A random state or nonce needs 16 to 1024 bytes (128 bits at least); \(byteCount) was asked for."
            )
        }
        return Base64URLEncoding.encode(try LibCrypto.randomBytes(count: byteCount))
    }
}
