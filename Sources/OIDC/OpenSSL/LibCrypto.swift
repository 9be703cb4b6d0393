internal import COpenSSL

/// The OpenSSL primitives the request side needs: random bytes and SHA-256.
///
/// Everything that touches OpenSSL lives in this folder; callers see Swift values only.
package enum LibCrypto {
    /// Cryptographically secure random bytes from OpenSSL's DRBG (seeded by the OS).
    package static func randomBytes(count: Int) throws(OIDCError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else {
            throw OIDCError(.randomFailure, "OpenSSL's random generator failed: \(drainErrorQueue())")
        }
        return bytes
    }

    /// SHA-256 of the bytes.
    package static func sha256(_ bytes: [UInt8]) throws(OIDCError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        guard ok == 1, length == 32 else {
            throw OIDCError(.cryptoFailure, "OpenSSL's SHA-256 failed: \(drainErrorQueue())")
        }
        return digest
    }

    /// HMAC of `data` under `key` with the SHA-2 digest named `digest` (`SHA256`, `SHA384`, `SHA512`).
    package static func hmac(digest: String, key: [UInt8], data: [UInt8]) throws(OIDCError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length = 0
        let result = key.withUnsafeBytes { keyBytes in
            data.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { output in
                    EVP_Q_mac(
                        nil, "HMAC", nil, digest, nil, keyBytes.baseAddress, keyBytes.count, input.baseAddress, input.count,
                        output.baseAddress, output.count, &length
                    )
                }
            }
        }
        guard result != nil else {
            throw OIDCError(.cryptoFailure, "OpenSSL's HMAC-\(digest) failed: \(drainErrorQueue())")
        }
        return Array(out.prefix(length))
    }

    /// The OpenSSL version string, such as `OpenSSL 3.0.19 …`.
    package static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }

    /// Reads and clears this thread's OpenSSL error queue into one line.
    static func drainErrorQueue() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error reported" : messages.joined(separator: "; ")
    }
}
