/// The JWS algorithms the verifier supports (RFC 7518 §3, RFC 8037, RFC 9864). `none` is not one of
/// them, nor is `Ed448`.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case rs384 = "RS384"
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case rs512 = "RS512"
    /// RSASSA-PSS with SHA-256 (and MGF1 with SHA-256).
    case ps256 = "PS256"
    /// RSASSA-PSS with SHA-384 (and MGF1 with SHA-384).
    case ps384 = "PS384"
    /// RSASSA-PSS with SHA-512 (and MGF1 with SHA-512).
    case ps512 = "PS512"
    /// ECDSA on P-256 with SHA-256; the signature is the raw 64-byte `r‖s`.
    case es256 = "ES256"
    /// ECDSA on P-384 with SHA-384; the signature is the raw 96-byte `r‖s`.
    case es384 = "ES384"
    /// ECDSA on P-521 with SHA-512; the signature is the raw 132-byte `r‖s`.
    case es512 = "ES512"
    /// EdDSA (RFC 8037); verified with an OKP key on curve Ed25519 only (no Ed448).
    case edDSA = "EdDSA"
    /// RFC 9864's fully-specified name for EdDSA with Ed25519: only an OKP key on curve Ed25519.
    case ed25519 = "Ed25519"
    /// HMAC with SHA-256, keyed with the client secret; accepted only when explicitly allowed.
    case hs256 = "HS256"
    /// HMAC with SHA-384, keyed with the client secret; accepted only when explicitly allowed.
    case hs384 = "HS384"
    /// HMAC with SHA-512, keyed with the client secret; accepted only when explicitly allowed.
    case hs512 = "HS512"

    /// The asymmetric algorithms a verifier accepts by default.
    public static let asymmetric: Set<JWSAlgorithm> = [
        .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .es256, .es384, .es512, .edDSA, .ed25519,
    ]

    /// EdDSA under either name: the polymorphic `EdDSA` (RFC 8037) or `Ed25519` (RFC 9864).
    package var isEdDSAAlgorithm: Bool { self == .edDSA || self == .ed25519 }

    /// HS256/384/512: keyed with the client secret, allowed only when explicitly configured.
    package var isHMACAlgorithm: Bool { self == .hs256 || self == .hs384 || self == .hs512 }

    /// The JWK `kty` a key for this algorithm must have.
    package var jwkKeyType: String {
        switch self {
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: "RSA"
        case .es256, .es384, .es512: "EC"
        case .edDSA, .ed25519: "OKP"
        case .hs256, .hs384, .hs512: "oct"
        }
    }

    /// The JWK `crv` a key must have, for EC and OKP algorithms.
    package var jwkCurve: String? {
        switch self {
        case .es256: "P-256"
        case .es384: "P-384"
        case .es512: "P-521"
        case .edDSA, .ed25519: "Ed25519"
        default: nil
        }
    }

    /// The SHA-2 digest name (`SHA256`, …); `nil` for EdDSA.
    var digestName: String? {
        switch self {
        case .rs256, .ps256, .es256, .hs256: "SHA256"
        case .rs384, .ps384, .es384, .hs384: "SHA384"
        case .rs512, .ps512, .es512, .hs512: "SHA512"
        case .edDSA, .ed25519: nil
        }
    }
}
