internal import CJWT
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Signs JWTs for tests with libjwt 1.10 (loaded on the first ``mint(claimsJSON:headers:)``).
///
/// For minting only: libjwt's own verification accepts an HS256 token keyed with an RSA public key
/// (algorithm confusion), so this package never verifies with it.
public struct TokenMinter: Sendable {
    /// The algorithms libjwt 1.10 signs.
    public enum Algorithm: String, Sendable, CaseIterable {
        /// HMAC with SHA-256.
        case hs256 = "HS256"
        /// HMAC with SHA-384.
        case hs384 = "HS384"
        /// HMAC with SHA-512.
        case hs512 = "HS512"
        /// RSASSA-PKCS1-v1_5 with SHA-256.
        case rs256 = "RS256"
        /// RSASSA-PKCS1-v1_5 with SHA-384.
        case rs384 = "RS384"
        /// RSASSA-PKCS1-v1_5 with SHA-512.
        case rs512 = "RS512"
        /// ECDSA on P-256 with SHA-256.
        case es256 = "ES256"
        /// ECDSA on P-384 with SHA-384.
        case es384 = "ES384"
        /// ECDSA on P-521 with SHA-512.
        case es512 = "ES512"

        var libjwtValue: jwt_alg_t {
            switch self {
            case .hs256: JWT_ALG_HS256
            case .hs384: JWT_ALG_HS384
            case .hs512: JWT_ALG_HS512
            case .rs256: JWT_ALG_RS256
            case .rs384: JWT_ALG_RS384
            case .rs512: JWT_ALG_RS512
            case .es256: JWT_ALG_ES256
            case .es384: JWT_ALG_ES384
            case .es512: JWT_ALG_ES512
            }
        }
    }

    /// Why minting failed.
    public struct MintError: Error, Sendable, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// The algorithm tokens are signed with.
    public let algorithm: Algorithm
    private let key: [UInt8]

    /// A minter for `algorithm`.
    ///
    /// - Parameters:
    ///   - algorithm: the algorithm tokens are signed with.
    ///   - key: a PEM private key for RS*/ES*, the raw secret bytes for HS*.
    public init(algorithm: Algorithm, key: [UInt8]) {
        self.algorithm = algorithm
        self.key = key
    }

    /// A PEM private key for RS*/ES*, or a secret string for HS*.
    public init(algorithm: Algorithm, key: String) {
        self.init(algorithm: algorithm, key: Array(key.utf8))
    }

    /// Signs `claimsJSON` (a JSON object) with the extra string `headers` (such as `kid`).
    ///
    /// libjwt writes the header members `alg` and `typ` itself.
    public func mint(claimsJSON: String, headers: [String: String] = [:]) throws(MintError) -> String {
        let libjwt = try LibJWT.shared.get()
        var handle: OpaquePointer?
        guard libjwt.new(&handle) == 0, let jwt = handle else { throw MintError(description: "libjwt could not allocate a JWT") }
        defer { libjwt.free(jwt) }

        let status = key.withUnsafeBufferPointer { libjwt.setAlgorithm(jwt, algorithm.libjwtValue, $0.baseAddress, Int32($0.count)) }
        guard status == 0 else {
            throw MintError(description: "libjwt refused the \(algorithm.rawValue) key (error \(status)); RS*/ES* need a PEM private key")
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard libjwt.addHeader(jwt, name, value) == 0 else {
                throw MintError(description: "libjwt refused the header '\(name)'")
            }
        }
        guard libjwt.addGrantsJSON(jwt, claimsJSON) == 0 else {
            throw MintError(description: "libjwt refused the claims: they must be a JSON object")
        }
        guard let encoded = libjwt.encode(jwt) else {
            throw MintError(description: "libjwt could not sign the token with \(algorithm.rawValue)")
        }
        defer { free(encoded) }
        return String(cString: encoded)
    }
}
