internal import COpenSSL

/// Verifies a server's certificate chain the way a TLS client must, with OpenSSL's `X509_verify_cert`:
/// a path to a trusted root, validity dates, the TLS-server purpose, and the host name or IP
/// address. Used by ``NIOHTTPTransport`` for pinned hosts, where NIOSSL's custom verification
/// callback replaces all of BoringSSL's checks, so every one of them has to be done here.
///
/// Owns one `X509_STORE` (the trust anchors), built once and never changed afterwards: OpenSSL lets
/// several threads verify against one store concurrently, hence `@unchecked Sendable`.
final class X509ChainVerifier: @unchecked Sendable {
    private let store: OpaquePointer

    /// What a verification found.
    enum Outcome: Sendable, Equatable {
        /// The chain leads to a trusted root and names the host; the SHA-256 of the SubjectPublicKeyInfo
        /// of every certificate of the verified chain, leaf first.
        case trusted(spkiSHA256: [[UInt8]])
        /// Why the chain was refused (OpenSSL's reason, no certificate content).
        case untrusted(String)
    }

    /// `X509_PURPOSE_SSL_SERVER` and `X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS` from `openssl/x509v3.h`,
    /// which the COpenSSL shim does not include (stable values of the OpenSSL 3 ABI).
    private static let purposeSSLServer: Int32 = 2
    /// `X509_PURPOSE_SSL_CLIENT`.
    private static let purposeSSLClient: Int32 = 1
    private static let noPartialWildcards: UInt32 = 0x4

    /// Largest number of certificates read from one PEM string and accepted in one presented chain.
    private static let maximumCertificates = 1000
    private static let maximumChainLength = 16

    /// - Parameters:
    ///   - trustsSystemRoots: load the system's default trust store (`X509_STORE_set_default_paths`,
    ///     `/etc/ssl/certs` on Debian).
    ///   - additionalRootsPEM: more trust anchors; each string holds one or more PEM certificates.
    /// - Throws: ``OIDCError/Code/invalidArgument`` when a string holds no certificate or a malformed
    ///   one; ``OIDCError/Code/cryptoFailure`` when OpenSSL fails.
    init(trustsSystemRoots: Bool, additionalRootsPEM: [String]) throws(OIDCError) {
        guard let store = X509_STORE_new() else { throw Self.failure("X509_STORE_new") }
        if trustsSystemRoots, X509_STORE_set_default_paths(store) != 1 {
            X509_STORE_free(store)
            throw Self.failure("X509_STORE_set_default_paths")
        }
        for (index, pem) in additionalRootsPEM.enumerated() {
            let certificates: [X509Certificate]
            do { certificates = try X509Certificate.readAll(pem: pem) } catch {
                X509_STORE_free(store)
                throw OIDCError(
                    .invalidArgument,
                    "Additional trust root #\(index + 1) is not a PEM certificate (-----BEGIN CERTIFICATE-----): \(error.message)"
                )
            }
            for certificate in certificates where X509_STORE_add_cert(store, certificate.pointer) != 1 {
                // A duplicate of a certificate already in the store is harmless.
                let code = ERR_peek_last_error()
                if ERR_GET_REASON(code) != X509_R_CERT_ALREADY_IN_HASH_TABLE {
                    X509_STORE_free(store)
                    throw Self.failure("X509_STORE_add_cert")
                }
                ERR_clear_error()
            }
        }
        self.store = store
    }

    deinit { X509_STORE_free(store) }

    /// Verifies `chain` (DER, leaf first, as the server presented it; the others are untrusted
    /// intermediates) for `host` (a DNS name or an IP literal, without brackets) at the current time;
    /// with `host` `nil`, for a TLS client (the client-authentication purpose, no name), as a server
    /// checks a `tls_client_auth` certificate (RFC 8705 §2.1).
    func verify(chain: [[UInt8]], host: String?) -> Outcome {
        defer { ERR_clear_error() }
        guard !chain.isEmpty else { return .untrusted("the server presented no certificate") }
        guard chain.count <= Self.maximumChainLength else {
            return .untrusted("the server presented more than \(Self.maximumChainLength) certificates")
        }
        var certificates: [X509Certificate] = []
        for der in chain {
            guard let certificate = X509Certificate(der: der) else {
                return .untrusted("the server presented a certificate that is not valid DER")
            }
            certificates.append(certificate)
        }
        guard let untrusted = OPENSSL_sk_new_null() else { return .untrusted("OpenSSL could not allocate a stack") }
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in certificates.dropFirst() where OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.pointer)) == 0 {
            return .untrusted("OpenSSL could not build the chain")
        }
        guard let context = X509_STORE_CTX_new() else { return .untrusted("OpenSSL could not allocate a verification context") }
        defer { X509_STORE_CTX_free(context) }
        return withExtendedLifetime(certificates) { () -> Outcome in
            guard X509_STORE_CTX_init(context, store, certificates[0].pointer, untrusted) == 1,
                X509_STORE_CTX_set_purpose(context, host == nil ? Self.purposeSSLClient : Self.purposeSSLServer) == 1,
                let parameters = X509_STORE_CTX_get0_param(context)
            else { return .untrusted("OpenSSL could not set up the verification: \(LibCrypto.drainErrorQueue())") }
            let nameSet: Bool
            if let host = host, Self.isIPAddress(host) {
                nameSet = X509_VERIFY_PARAM_set1_ip_asc(parameters, host) == 1
            } else if let host {
                X509_VERIFY_PARAM_set_hostflags(parameters, Self.noPartialWildcards)
                nameSet = X509_VERIFY_PARAM_set1_host(parameters, host, 0) == 1
            } else {
                nameSet = true
            }
            guard nameSet else { return .untrusted("'\(host ?? "")' is not a host name or IP address OpenSSL can check") }
            guard X509_verify_cert(context) == 1 else {
                let code = X509_STORE_CTX_get_error(context)
                return .untrusted(String(cString: X509_verify_cert_error_string(Int(code))))
            }
            guard let verified = X509_STORE_CTX_get0_chain(context) else { return .untrusted("OpenSSL returned no verified chain") }
            var digests: [[UInt8]] = []
            let count = min(Int(OPENSSL_sk_num(verified)), Self.maximumChainLength + 1)
            for index in 0..<count {
                guard let raw = OPENSSL_sk_value(verified, Int32(index)),
                    let digest = try? X509Certificate.spkiSHA256(of: OpaquePointer(raw))
                else { return .untrusted("OpenSSL could not encode a public key of the verified chain") }
                digests.append(digest)
            }
            return .trusted(spkiSHA256: digests)
        }
    }

    /// SHA-256 of the DER SubjectPublicKeyInfo of a PEM certificate (`BEGIN CERTIFICATE`) or public
    /// key (`BEGIN PUBLIC KEY`); the first one when the string holds several.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the string is neither.
    static func spkiSHA256(pem: String) throws(OIDCError) -> [UInt8] {
        if pem.contains("-----BEGIN CERTIFICATE-----") {
            let certificates = try X509Certificate.readAll(pem: pem)
            return try X509Certificate.spkiSHA256(of: certificates[0].pointer)
        }
        guard pem.contains("-----BEGIN PUBLIC KEY-----") else {
            throw OIDCError(.invalidArgument, "Expected a PEM certificate or public key (-----BEGIN CERTIFICATE----- or -----BEGIN PUBLIC KEY-----).")
        }
        let bytes = Array(pem.utf8)
        let der: [UInt8]? = bytes.withUnsafeBytes { buffer -> [UInt8]? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else { return nil }
            defer { EVP_PKEY_free(key) }
            let length = i2d_PUBKEY(key, nil)
            guard length > 0 else { return nil }
            var out = [UInt8](repeating: 0, count: Int(length))
            let written = out.withUnsafeMutableBufferPointer { target -> Int32 in
                var cursor = target.baseAddress
                return i2d_PUBKEY(key, &cursor)
            }
            return written == length ? out : nil
        }
        guard let der else {
            let reason = LibCrypto.drainErrorQueue()
            throw OIDCError(.invalidArgument, "The PEM public key could not be read: \(reason)")
        }
        return try LibCrypto.sha256(der)
    }

    /// Whether `host` is an IPv4 or IPv6 literal (not a DNS name).
    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || ($0.isASCII && $0.isNumber) })
    }

    private static func failure(_ step: String) -> OIDCError {
        OIDCError(.cryptoFailure, "OpenSSL failed (\(step)): \(LibCrypto.drainErrorQueue())")
    }
}

/// One OpenSSL `X509`, freed on `deinit`; lives only inside a verification or a PEM read.
final class X509Certificate {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    convenience init?(der: [UInt8]) {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        self.init(pointer: parsed)
    }

    deinit { X509_free(pointer) }

    /// `XN_FLAG_RFC2253` from `openssl/x509.h` (a macro of macros): RFC 2253 escaping, `,`
    /// separators, most significant name last reversed into first, short names.
    private static let rfc2253Flags: UInt = 0x0111_0317

    /// The subject name as RFC 4514 (RFC 2253) text, as RFC 8705 §2.1.2 compares it: `CN=client,O=Example`.
    var subjectDN: String? {
        guard let name = X509_get_subject_name(pointer), let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, Self.rfc2253Flags) >= 0 else { return nil }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let read = buffer.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
            guard read > 0 else { break }
            bytes += buffer[0..<Int(read)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every certificate of a PEM string, at least one.
    static func readAll(pem: String) throws(OIDCError) -> [X509Certificate] {
        let bytes = Array(pem.utf8)
        let certificates = bytes.withUnsafeBytes { buffer -> [X509Certificate] in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return [] }
            defer { BIO_free(bio) }
            var result: [X509Certificate] = []
            while result.count < X509ChainVerifier.maximumCertificatesPerPEM, let next = PEM_read_bio_X509(bio, nil, nil, nil) {
                result.append(X509Certificate(pointer: next))
            }
            return result
        }
        // Reading stops with a "no start line" error at the end of the input: expected.
        let reason = LibCrypto.drainErrorQueue()
        guard !certificates.isEmpty else { throw OIDCError(.invalidArgument, "No PEM certificate could be read (\(reason)).") }
        return certificates
    }

    /// SHA-256 of the DER SubjectPublicKeyInfo of `certificate`.
    static func spkiSHA256(of certificate: OpaquePointer) throws(OIDCError) -> [UInt8] {
        guard let publicKey = X509_get_X509_PUBKEY(certificate) else {
            throw OIDCError(.cryptoFailure, "The certificate has no public key.")
        }
        let length = i2d_X509_PUBKEY(publicKey, nil)
        guard length > 0 else { throw OIDCError(.cryptoFailure, "OpenSSL could not encode the public key: \(LibCrypto.drainErrorQueue())") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { target -> Int32 in
            var cursor = target.baseAddress
            return i2d_X509_PUBKEY(publicKey, &cursor)
        }
        guard written == length else { throw OIDCError(.cryptoFailure, "OpenSSL could not encode the public key: \(LibCrypto.drainErrorQueue())") }
        return try LibCrypto.sha256(der)
    }
}

extension X509ChainVerifier {
    fileprivate static var maximumCertificatesPerPEM: Int { maximumCertificates }
}
