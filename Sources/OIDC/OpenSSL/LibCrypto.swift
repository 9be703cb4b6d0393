internal import COpenSSL

/// The OpenSSL primitives the request side needs: random bytes, SHA-256, HMAC, wiping buffers.
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
        try digest(bytes, with: OpenSSLDigest.sha256, name: "SHA-256")
    }

    /// The SHA-2 digest (`SHA256`, `SHA384`, `SHA512`) of the bytes.
    package static func digest(_ bytes: [UInt8], name: String) throws(OIDCError) -> [UInt8] {
        let digest: OpenSSLDigest? = switch name {
        case "SHA256": OpenSSLDigest.sha256
        case "SHA384": OpenSSLDigest.sha384
        case "SHA512": OpenSSLDigest.sha512
        default: nil
        }
        return try self.digest(bytes, with: digest, name: name)
    }

    private static func digest(_ bytes: [UInt8], with digest: OpenSSLDigest?, name: String) throws(OIDCError) -> [UInt8] {
        guard let digest else { throw OIDCError(.cryptoFailure, "OpenSSL has no \(name) digest available.") }
        var output = [UInt8](repeating: 0, count: digest.size)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, digest.pointer, nil)
            }
        }
        guard ok == 1, Int(length) == digest.size else {
            throw OIDCError(.cryptoFailure, "OpenSSL's \(name) failed: \(drainErrorQueue())")
        }
        return output
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

    /// Overwrites `bytes` with zeros in a way the compiler cannot remove (`OPENSSL_cleanse`), for
    /// plaintext and key scratch buffers. Only the array's own storage is wiped: copies made
    /// earlier (copy-on-write) are not reached.
    package static func cleanse(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { OPENSSL_cleanse(base, buffer.count) }
        }
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
