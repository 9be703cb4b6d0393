/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded strictly, not yet verified:
/// the library's own plumbing under ``IDTokenVerifier`` and ``JARMVerifier``, public by mistake.
@available(
    *, deprecated,
    message: "CompactJWS is internal plumbing and will be removed; verify tokens with IDTokenVerifier or JARMVerifier, read an unverified token with UnverifiedJWT, check a signature with JWS.verify(signature:over:with:algorithm:)"
)
public struct CompactJWS: Sendable {
    /// The default bound on a token's length: 64 KiB.
    public static let defaultMaximumLength = ParsedJWS.defaultMaximumLength

    private let parsed: ParsedJWS

    /// The header's `alg`: a supported algorithm, never `none`.
    public var algorithm: JWSAlgorithm { parsed.algorithm }
    /// The header's `kid`, if any.
    public var keyID: String? { parsed.keyID }
    /// The header's `typ`, if any.
    public var type: String? { parsed.type }
    /// The whole protected header.
    public var header: [String: JSONValue] { parsed.header }
    /// The decoded payload bytes.
    public var payload: [UInt8] { parsed.payload }
    /// The decoded signature bytes.
    public var signature: [UInt8] { parsed.signature }
    /// `BASE64URL(header) || '.' || BASE64URL(payload)`, the bytes that were signed.
    public var signingInput: [UInt8] { parsed.signingInput }

    /// Splits and decodes `token`, at most `maximumLength` bytes long (64 KiB by default).
    ///
    /// - Throws: ``OIDCError/Code/malformedToken`` for anything not strictly well-formed;
    ///   ``OIDCError/Code/algorithmNotAllowed`` for `none` (any casing) or an unknown `alg`.
    public init(_ token: String, maximumLength: Int = 65_536) throws(OIDCError) {
        parsed = try ParsedJWS(token, maximumLength: maximumLength)
    }

    /// Verifies the signature over ``signingInput`` with `key` under ``algorithm``.
    ///
    /// - Throws: what ``JWS/verify(signature:over:with:algorithm:)`` throws.
    public func verifySignature(with key: JWK) throws(OIDCError) {
        try parsed.verifySignature(with: key)
    }
}
