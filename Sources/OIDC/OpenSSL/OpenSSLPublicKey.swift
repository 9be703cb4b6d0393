internal import COpenSSL
internal import Synchronization

/// One OpenSSL `EVP_PKEY` holding a public verification key, built once from JWK parameters through
/// OpenSSL 3's `EVP_PKEY_fromdata`, immutable, freed on `deinit`.
///
/// The only type that owns an OpenSSL key pointer; `@unchecked Sendable` because an `EVP_PKEY` that
/// is never mutated after construction may be used from several threads (OpenSSL 3 threading rules).
final class OpenSSLPublicKey: @unchecked Sendable {
    private let pointer: OpaquePointer
    /// Key size in bits (RSA modulus, EC field size, 253 for Ed25519).
    let bits: Int
    /// `EVP_PKEY_get_size`: for RSA, the modulus length in bytes.
    let size: Int

    /// Verification contexts already set up for this key, by scheme (``Scheme/slot``): OpenSSL 3
    /// looks up the signature method and builds a key context on every `EVP_DigestVerifyInit`,
    /// about 3 µs a verification; a context made once verifies any number of digests. Each is
    /// used by one verification at a time (taken out, then put back), at most
    /// ``pooledContexts`` kept per scheme.
    private let contexts = Mutex<[[PooledContext]]>(Array(repeating: [], count: Scheme.slots))
    private static let pooledContexts = 8

    /// An `EVP_PKEY_CTX` in the pool: used by one verification at a time, so it may move between threads.
    private struct PooledContext: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        self.bits = Int(EVP_PKEY_get_bits(pointer))
        self.size = Int(EVP_PKEY_get_size(pointer))
    }

    deinit {
        contexts.withLock { pools in
            for pool in pools { for context in pool { EVP_PKEY_CTX_free(context.pointer) } }
        }
        EVP_PKEY_free(pointer)
    }

    /// An RSA public key from its big-endian modulus and exponent.
    static func rsa(modulus: [UInt8], exponent: [UInt8]) throws(OIDCError) -> OpenSSLPublicKey {
        guard let builder = OSSL_PARAM_BLD_new() else { throw failure("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(n)
            BN_free(e)
        }
        guard let n, let e, OSSL_PARAM_BLD_push_BN(builder, coidc_param_rsa_n(), n) == 1, OSSL_PARAM_BLD_push_BN(builder, coidc_param_rsa_e(), e) == 1 else {
            throw failure("building RSA parameters")
        }
        return try fromData(type: "RSA", builder: builder)
    }

    /// An EC public key on a named curve (`P-256`, `P-384`, `P-521`) from its affine coordinates;
    /// OpenSSL refuses points that are not on the curve, and a public-key check runs too.
    static func ec(curve: String, x: [UInt8], y: [UInt8]) throws(OIDCError) -> OpenSSLPublicKey {
        guard let builder = OSSL_PARAM_BLD_new() else { throw failure("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let point = [0x04] + x + y
        // The builder keeps the octet string's pointer until to_param (in fromData) copies it: both
        // happen inside the one closure in which the pointer is valid.
        let key = try point.withUnsafeBufferPointer { (buffer) throws(OIDCError) -> OpenSSLPublicKey in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, coidc_param_group_name(), curveName(curve), 0) == 1,
                OSSL_PARAM_BLD_push_octet_string(builder, coidc_param_public_key(), buffer.baseAddress, buffer.count) == 1
            else { throw failure("building EC parameters") }
            return try fromData(type: "EC", builder: builder)
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw failure("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check(context) == 1 else {
            _ = LibCrypto.drainErrorQueue()
            throw OIDCError(.invalidKey, "The EC key's point is not a valid point of \(curve).")
        }
        return key
    }

    /// Static C strings for the curve names (the builder keeps the value pointer too).
    private static let curveNames: [String: StaticString] = ["P-256": "P-256", "P-384": "P-384", "P-521": "P-521"]

    private static func curveName(_ curve: String) -> UnsafePointer<CChar>? {
        guard let name = curveNames[curve] else { return nil }
        return UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// An Ed25519 public key from its 32 raw bytes.
    static func ed25519(_ raw: [UInt8]) throws(OIDCError) -> OpenSSLPublicKey {
        let key = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, $0.baseAddress, $0.count) }
        guard let key else {
            _ = LibCrypto.drainErrorQueue()
            throw OIDCError(.invalidKey, "The Ed25519 key is not a valid public key.")
        }
        return OpenSSLPublicKey(key)
    }

    private static func fromData(type: String, builder: OpaquePointer) throws(OIDCError) -> OpenSSLPublicKey {
        guard let params = OSSL_PARAM_BLD_to_param(builder) else { throw failure("OSSL_PARAM_BLD_to_param") }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw failure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, coidc_selection_public_key(), params) == 1, let key
        else {
            let reason = LibCrypto.drainErrorQueue()
            throw OIDCError(.invalidKey, "OpenSSL refused the \(type) key parameters: \(reason)")
        }
        return OpenSSLPublicKey(key)
    }

    private static func failure(_ step: String) -> OIDCError {
        OIDCError(.cryptoFailure, "OpenSSL failed (\(step)): \(LibCrypto.drainErrorQueue())")
    }

    /// How a signature is checked.
    enum Scheme: Sendable {
        case pkcs1(OpenSSLDigest)
        /// RSASSA-PSS with MGF1 of the same digest and a salt as long as the digest (RFC 7518 §3.5).
        case pss(OpenSSLDigest)
        /// `signature` must already be DER.
        case ecdsa(OpenSSLDigest)
        case ed25519

        static let slots = 9

        /// Where its contexts are pooled; `nil` for Ed25519, which signs the message itself, not a digest.
        var slot: Int? {
            switch self {
            case .pkcs1(let digest): digest.slot
            case .pss(let digest): 3 + digest.slot
            case .ecdsa(let digest): 6 + digest.slot
            case .ed25519: nil
            }
        }

        /// The digest the signature covers; `nil` for Ed25519.
        var digest: OpenSSLDigest? {
            switch self {
            case .pkcs1(let digest), .pss(let digest), .ecdsa(let digest): digest
            case .ed25519: nil
            }
        }
    }

    /// Whether `signature` is a valid signature of `message` under `scheme`: `false` for any
    /// mismatch or failure, with OpenSSL's error queue cleared. RSA and ECDSA hash the message in
    /// one call (`EVP_Digest`) and check the digest with a pooled context (`EVP_PKEY_verify`,
    /// with the scheme's padding and `signature_md`, as `EVP_DigestVerify` does); Ed25519 goes
    /// through `EVP_DigestVerify`.
    func verify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, scheme: Scheme) -> Bool {
        guard let slot = scheme.slot, let digest = scheme.digest else {
            return digestVerify(signature: signature, message: message, scheme: scheme)
        }
        var empty: UInt8 = 0
        let ok = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { hash -> Bool in
            var length: UInt32 = 0
            let hashed = withUnsafeMutablePointer(to: &empty) { emptyPointer in
                EVP_Digest(message.count > 0 ? message.baseAddress : UnsafeRawPointer(emptyPointer), message.count, hash.baseAddress, &length, digest.pointer, nil)
            }
            guard hashed == 1, let context = takeContext(slot, scheme) else { return false }
            let signatureBytes = signature.baseAddress?.assumingMemoryBound(to: UInt8.self)
            let valid = EVP_PKEY_verify(context, signatureBytes, signature.count, hash.baseAddress, Int(length)) == 1
            // A context that failed is not trusted again: freed, not pooled.
            if valid { putBack(context, slot) } else { EVP_PKEY_CTX_free(context) }
            return valid
        }
        if !ok { ERR_clear_error() }
        return ok
    }

    /// A verification context of this key for `scheme`: a pooled one, else a new one set up.
    private func takeContext(_ slot: Int, _ scheme: Scheme) -> OpaquePointer? {
        if let pooled = contexts.withLock({ $0[slot].popLast() }) { return pooled.pointer }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { return nil }
        var ok = EVP_PKEY_verify_init(context) == 1
        switch scheme {
        case .pkcs1(let digest):
            ok = ok && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1 && EVP_PKEY_CTX_set_signature_md(context, digest.pointer) == 1
        case .pss(let digest):
            ok = ok && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_signature_md(context, digest.pointer) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, Int32(digest.size)) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(context, digest.pointer) == 1
        case .ecdsa(let digest):
            ok = ok && EVP_PKEY_CTX_set_signature_md(context, digest.pointer) == 1
        case .ed25519:
            ok = false
        }
        guard ok else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    private func putBack(_ context: OpaquePointer, _ slot: Int) {
        let pooled = PooledContext(pointer: context)
        let kept = contexts.withLock { pools in
            guard pools[slot].count < Self.pooledContexts else { return false }
            pools[slot].append(pooled)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }

    /// `EVP_DigestVerify` of `signature` over `message` with no digest: Ed25519 signs the message itself.
    private func digestVerify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, scheme: Scheme) -> Bool {
        guard case .ed25519 = scheme, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var ok = EVP_DigestVerifyInit(context, nil, nil, nil, pointer) == 1
        if ok {
            let signatureBytes = signature.baseAddress?.assumingMemoryBound(to: UInt8.self)
            if let messageBytes = message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count > 0 {
                ok = EVP_DigestVerify(context, signatureBytes, signature.count, messageBytes, message.count) == 1
            } else {
                // OpenSSL wants a non-null pointer even for an empty message.
                var empty: UInt8 = 0
                ok = withUnsafePointer(to: &empty) { EVP_DigestVerify(context, signatureBytes, signature.count, $0, 0) } == 1
            }
        }
        if !ok { ERR_clear_error() }
        return ok
    }
}

/// A fetched OpenSSL message digest, kept for the life of the process (fetching by name on every
/// verification would cost more than hashing a token).
final class OpenSSLDigest: @unchecked Sendable {
    let pointer: OpaquePointer
    let name: String
    /// Output length in bytes.
    let size: Int

    private init?(_ name: String) {
        guard let pointer = EVP_MD_fetch(nil, name, nil) else { return nil }
        self.pointer = pointer
        self.name = name
        self.size = Int(EVP_MD_get_size(pointer))
    }

    deinit { EVP_MD_free(pointer) }

    /// Its place among the three digests (SHA-256, SHA-384, SHA-512), for pooling.
    var slot: Int { size <= 32 ? 0 : size <= 48 ? 1 : 2 }

    static let sha256 = OpenSSLDigest("SHA256")
    static let sha384 = OpenSSLDigest("SHA384")
    static let sha512 = OpenSSLDigest("SHA512")
}
