/// Proof Key for Code Exchange (RFC 7636) with the `S256` method.
///
/// The verifier stays with the client and goes only to the token endpoint; the challenge,
/// `BASE64URL(SHA-256(ASCII(verifier)))`, goes into the authorization URL. `plain` is not offered:
/// it protects nothing once the authorization request leaks.
public struct PKCE: Sendable, Equatable {
    /// The only method this library sends.
    package static let method = "S256"
    /// RFC 7636 §4.1: at least 43 characters.
    package static let minimumLength = 43
    /// RFC 7636 §4.1: at most 128 characters.
    package static let maximumLength = 128

    /// The code verifier, sent with the code exchange.
    public let verifier: Secret
    /// The code challenge, sent in the authorization URL.
    public let challenge: String
    /// `S256`.
    public var method: String { Self.method }

    /// Uses a verifier the caller made (an external login, a test, a deterministic script).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` unless the verifier has 43 to 128 characters
    ///   from `A-Z a-z 0-9 - . _ ~` (RFC 7636 §4.1).
    public init(verifier: String) throws(OIDCError) {
        let bytes = Array(verifier.utf8)
        guard (Self.minimumLength...Self.maximumLength).contains(bytes.count) else {
            throw .invalidArgument(
                "A PKCE code verifier must have 43 to 128 characters (RFC 7636 §4.1); this one has \(bytes.count)."
            )
        }
        guard bytes.allSatisfy(Self.isUnreserved) else {
            throw .invalidArgument(
                "A PKCE code verifier may contain only A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)."
            )
        }
        self.verifier = Secret(verifier)
        self.challenge = Base64URLEncoding.encode(try LibCrypto.sha256(bytes))
    }

    /// A fresh verifier of `length` characters from OpenSSL's CSPRNG (by default 64: 384 bits of randomness), and its challenge.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a length outside 43...128.
    public static func generate(length: Int = 64) throws(OIDCError) -> PKCE {
        guard (minimumLength...maximumLength).contains(length) else {
            throw .invalidArgument("A PKCE code verifier must have 43 to 128 characters; \(length) was asked for.")
        }
        // base64url characters are all unreserved; 6 bits each.
        let random = try LibCrypto.randomBytes(count: (length * 6 + 7) / 8)
        return try PKCE(verifier: String(Base64URLEncoding.encode(random).prefix(length)))
    }

    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
    }
}
