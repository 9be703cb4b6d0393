/// The algorithm's key requirements, public by mistake: the key checks' plumbing.
extension JWSAlgorithm {
    /// EdDSA under either name: the polymorphic `EdDSA` (RFC 8037) or `Ed25519` (RFC 9864).
    @available(*, deprecated, message: "compare with the cases: algorithm == .edDSA || algorithm == .ed25519")
    public var isEdDSA: Bool { isEdDSAAlgorithm }

    /// HS256/384/512: keyed with the client secret, allowed only when explicitly configured.
    @available(*, deprecated, message: "compare with the cases: [.hs256, .hs384, .hs512].contains(algorithm)")
    public var isHMAC: Bool { isHMACAlgorithm }

    /// The JWK `kty` a key for this algorithm must have.
    @available(*, deprecated, message: "keyType is internal plumbing: JWK(json:), JWKSet and JWSSigningKey check a key's type against the algorithm themselves")
    public var keyType: String { jwkKeyType }

    /// The JWK `crv` a key must have, for EC and OKP algorithms.
    @available(*, deprecated, message: "curve is internal plumbing: JWK(json:), JWKSet and JWSSigningKey check a key's curve against the algorithm themselves")
    public var curve: String? { jwkCurve }
}
