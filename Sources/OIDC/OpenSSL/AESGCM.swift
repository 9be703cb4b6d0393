internal import COpenSSL

/// AES-256-GCM (NIST SP 800-38D) through OpenSSL's EVP interface: a 32-byte key, a 96-bit IV and a
/// 128-bit tag, nothing else.
///
/// The primitive under ``TokenEncryption``. It takes the IV from the caller so that known-answer
/// vectors can be checked; ``TokenEncryption`` always passes fresh random bytes. Never call
/// ``seal(_:key:iv:authenticating:)`` twice with one key and one IV: GCM then leaks the XOR of the
/// plaintexts and lets the authentication key be recovered.
package enum AESGCM {
    /// Key length in bytes (AES-256).
    package static let keyByteCount = 32
    /// IV length in bytes (96 bits, the length GCM is designed for).
    package static let ivByteCount = 12
    /// Tag length in bytes (128 bits).
    package static let tagByteCount = 16

    /// Encrypts `plaintext` and authenticates it together with `aad`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a key or IV of the wrong length or a
    ///   plaintext over 2 GiB; ``OIDCError/Code/cryptoFailure`` when OpenSSL fails.
    package static func seal(
        _ plaintext: [UInt8], key: KeyBytes, iv: [UInt8], authenticating aad: [UInt8]
    ) throws(OIDCError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try checkSizes(key: key, iv: iv, count: plaintext.count, aad: aad)
        let context = try Context(encrypting: true, key: key, iv: iv)
        try context.authenticate(aad)
        var ciphertext = try context.update(plaintext)
        var length: Int32 = 0
        var final = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(context.pointer, &final, &length) == 1, length == 0 else { throw failure("EVP_EncryptFinal_ex") }
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag) == 1 else {
            LibCrypto.cleanse(&ciphertext)
            throw failure("EVP_CTRL_GCM_GET_TAG")
        }
        return (ciphertext, tag)
    }

    /// Decrypts `ciphertext` when `tag` authenticates it together with `aad` under `key`; `nil`
    /// when it does not (the ciphertext, tag, IV or AAD was changed, or the key is another). The
    /// unauthenticated output is wiped, never returned.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a key, IV or tag of the wrong length;
    ///   ``OIDCError/Code/cryptoFailure`` when OpenSSL fails otherwise.
    package static func open(
        _ ciphertext: [UInt8], tag: [UInt8], key: KeyBytes, iv: [UInt8], authenticating aad: [UInt8]
    ) throws(OIDCError) -> [UInt8]? {
        try checkSizes(key: key, iv: iv, count: ciphertext.count, aad: aad)
        guard tag.count == tagByteCount else { throw .invalidArgument("An AES-GCM tag must be \(tagByteCount) bytes, not \(tag.count).") }
        let context = try Context(encrypting: false, key: key, iv: iv)
        try context.authenticate(aad)
        var plaintext = try context.update(ciphertext)
        var expected = tag
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &expected) == 1 else {
            LibCrypto.cleanse(&plaintext)
            throw failure("EVP_CTRL_GCM_SET_TAG")
        }
        var length: Int32 = 0
        var final = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context.pointer, &final, &length) == 1, length == 0 else {
            // A tag mismatch: OpenSSL has already written the unauthenticated plaintext.
            LibCrypto.cleanse(&plaintext)
            _ = LibCrypto.drainErrorQueue()
            return nil
        }
        return plaintext
    }

    private static func checkSizes(key: KeyBytes, iv: [UInt8], count: Int, aad: [UInt8]) throws(OIDCError) {
        guard key.count == keyByteCount else { throw .invalidArgument("An AES-256 key must be \(keyByteCount) bytes, not \(key.count).") }
        guard iv.count == ivByteCount else { throw .invalidArgument("An AES-GCM IV must be \(ivByteCount) bytes, not \(iv.count).") }
        guard count < Int(Int32.max), aad.count < Int(Int32.max) else {
            throw .invalidArgument("AES-GCM input over 2 GiB is not supported.")
        }
    }

    private static func failure(_ step: String) -> OIDCError {
        OIDCError(.cryptoFailure, "OpenSSL's AES-256-GCM failed at \(step): \(LibCrypto.drainErrorQueue())")
    }

    /// One `EVP_CIPHER_CTX`, set up for AES-256-GCM with key and IV, freed when released (on every
    /// path, thrown errors included).
    private final class Context {
        let pointer: OpaquePointer
        let encrypting: Bool

        init(encrypting: Bool, key: KeyBytes, iv: [UInt8]) throws(OIDCError) {
            guard let pointer = EVP_CIPHER_CTX_new() else { throw AESGCM.failure("EVP_CIPHER_CTX_new") }
            self.pointer = pointer
            self.encrypting = encrypting
            let initialize = encrypting ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
            guard initialize(pointer, EVP_aes_256_gcm(), nil, nil, nil) == 1 else { throw AESGCM.failure("EVP_CipherInit_ex") }
            guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_GCM_SET_IVLEN, Int32(AESGCM.ivByteCount), nil) == 1 else {
                throw AESGCM.failure("EVP_CTRL_GCM_SET_IVLEN")
            }
            let ok = key.withUnsafeBytes { keyBytes in
                iv.withUnsafeBufferPointer { ivBytes in
                    initialize(pointer, nil, nil, keyBytes.bindMemory(to: UInt8.self).baseAddress, ivBytes.baseAddress)
                }
            }
            guard ok == 1 else { throw AESGCM.failure("setting the key and IV") }
        }

        deinit { EVP_CIPHER_CTX_free(pointer) }

        /// Feeds additional authenticated data (an update with no output buffer).
        func authenticate(_ aad: [UInt8]) throws(OIDCError) {
            guard !aad.isEmpty else { return }
            var length: Int32 = 0
            let update = encrypting ? EVP_EncryptUpdate : EVP_DecryptUpdate
            let ok = aad.withUnsafeBufferPointer { update(pointer, nil, &length, $0.baseAddress, Int32($0.count)) }
            guard ok == 1, length == Int32(aad.count) else { throw AESGCM.failure("adding the associated data") }
        }

        /// Encrypts or decrypts `input`; GCM is a stream mode, so the output has the input's length.
        func update(_ input: [UInt8]) throws(OIDCError) -> [UInt8] {
            guard !input.isEmpty else { return [] }
            var output = [UInt8](repeating: 0, count: input.count)
            var length: Int32 = 0
            let update = encrypting ? EVP_EncryptUpdate : EVP_DecryptUpdate
            let ok = input.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { target in
                    update(pointer, target.baseAddress, &length, source.baseAddress, Int32(source.count))
                }
            }
            guard ok == 1, length == Int32(input.count) else {
                LibCrypto.cleanse(&output)
                throw AESGCM.failure(encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
            }
            return output
        }
    }
}
