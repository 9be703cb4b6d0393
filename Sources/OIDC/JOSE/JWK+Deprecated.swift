/// The key's own limits and checks, public by mistake: the verifiers' plumbing.
extension JWK {
    /// Smallest RSA modulus accepted.
    @available(*, deprecated, message: "minimumRSABits is internal plumbing: JWK(json:) and JWKSet(json:) refuse (or skip) an RSA key under 2048 bits themselves")
    public static var minimumRSABits: Int { minimumRSAModulusBits }

    /// Largest RSA modulus accepted (bounds the cost of one verification).
    @available(*, deprecated, message: "maximumRSABits is internal plumbing: JWK(json:) and JWKSet(json:) refuse (or skip) an RSA key over 16384 bits themselves")
    public static var maximumRSABits: Int { maximumRSAModulusBits }

    /// Builds a JWK from a parsed JSON object.
    @available(*, deprecated, message: "use JWK(json:) with the key's JSON text")
    public init(object: [String: JSONValue]) throws(OIDCError) { try self.init(members: object) }

    /// Whether this key may verify `algorithm`: type and curve match, and `use`, `key_ops` and `alg`
    /// (when present) allow it.
    @available(*, deprecated, message: "canVerify(_:) is internal plumbing: IDTokenVerifier and JARMVerifier pick the key that may verify a token themselves; JWKSet.key(for:keyID:) finds one")
    public func canVerify(_ algorithm: JWSAlgorithm) -> Bool { mayVerify(algorithm) }
}
