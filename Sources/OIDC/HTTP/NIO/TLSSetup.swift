internal import Foundation
internal import NIOCore
internal import NIOSSL

/// The client side of TLS for one ``NIOHTTPTransport``: NIOSSL's context (system roots plus the
/// additional ones, full verification with host names) and, for pinned hosts, a verification
/// callback that redoes the whole check with OpenSSL (``X509ChainVerifier``) and then requires a pin.
///
/// Built once per transport; immutable. NIOSSL's context (which reads the system trust store, some
/// tens of milliseconds) is made at the first https connection, so plain-http users never pay for it.
struct TLSSetup: Sendable {
    private let context: LazySSLContext
    private let pins: [PublicKeyPin]
    /// Present when there are pins: NIOSSL's custom callback replaces all of BoringSSL's checks.
    private let verifier: X509ChainVerifier?

    /// - Throws: ``OIDCError/Code/invalidArgument`` for a malformed pin, trust root, client
    ///   certificate or key, or a key that is not the certificate's;
    ///   ``OIDCError/Code/tlsFailure`` when NIOSSL refuses the configuration.
    init(
        trustsSystemRoots: Bool, additionalTrustRootsPEM: [String], pins: [PublicKeyPin], clientCertificate: TLSClientCertificate? = nil
    ) throws(OIDCError) {
        for pin in pins { try pin.validate() }
        var roots: [NIOSSLCertificate] = []
        for (index, pem) in additionalTrustRootsPEM.enumerated() {
            do {
                let certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
                guard !certificates.isEmpty else { throw OIDCError(.invalidArgument, "empty") }
                roots += certificates
            } catch {
                throw OIDCError(
                    .invalidArgument,
                    "Additional trust root #\(index + 1) is not a PEM certificate (-----BEGIN CERTIFICATE-----)."
                )
            }
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        configuration.minimumTLSVersion = .tlsv12
        if trustsSystemRoots {
            configuration.trustRoots = .default
            configuration.additionalTrustRoots = roots.isEmpty ? [] : [.certificates(roots)]
        } else {
            configuration.trustRoots = .certificates(roots)
        }
        if let clientCertificate {
            let (chain, key) = try Self.read(clientCertificate)
            configuration.certificateChain = chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(key)
        }
        self.context = LazySSLContext(configuration: configuration)
        if clientCertificate != nil {
            // Made now, so that a key that is not the certificate's is a configuration error, not a failed handshake.
            do { _ = try context.get() } catch {
                throw OIDCError(
                    .invalidArgument,
                    "The TLS client certificate and private key do not go together (NIOSSL refused them): give the key of the certificate's leaf."
                )
            }
        }
        self.pins = pins
        self.verifier = pins.isEmpty
            ? nil : try X509ChainVerifier(trustsSystemRoots: trustsSystemRoots, additionalRootsPEM: additionalTrustRootsPEM)
    }

    /// The client certificate chain and key, parsed; the error never shows key material.
    private static func read(_ certificate: TLSClientCertificate) throws(OIDCError) -> ([NIOSSLCertificate], NIOSSLPrivateKey) {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMBytes(Array(certificate.chainPEM.utf8)) } catch { chain = [] }
        guard !chain.isEmpty else {
            throw OIDCError(
                .invalidArgument,
                "The TLS client certificate is not a PEM certificate chain (-----BEGIN CERTIFICATE-----): give the certificate the provider registered, leaf first."
            )
        }
        var keyBytes = Array(certificate.privateKeyPEM.revealedValue.utf8)
        defer { LibCrypto.cleanse(&keyBytes) }
        do {
            return (chain, try NIOSSLPrivateKey(bytes: keyBytes, format: .pem))
        } catch {
            throw OIDCError(
                .invalidArgument,
                "The TLS client private key is not an unencrypted PEM private key (PKCS#8, SEC1 or PKCS#1): give the certificate's key, without a passphrase."
            )
        }
    }

    /// Makes NIOSSL's context now (call before connecting, off the event loop's critical path).
    ///
    /// - Throws: ``OIDCError/Code/tlsFailure`` when NIOSSL refuses the configuration.
    func prepare() throws(OIDCError) {
        _ = try context.get()
    }

    /// The SHA-256 digests pinned for `host`, empty when no pin applies.
    func pinnedDigests(for host: String) -> Set<[UInt8]> {
        Set(pins.filter { $0.applies(to: host) }.flatMap(\.digests))
    }

    /// NIOSSL's client handler for `host`: SNI for names (never for IP literals, RFC 6066 §3), host
    /// verification always; for a pinned host, the OpenSSL check and the pin, with the reason of a
    /// refusal left in `handler` for the error the caller sees.
    func makeClientHandler(host: String, reportingTo handler: HTTPConnectionHandler) throws -> NIOSSLClientHandler {
        let context = try self.context.get()
        let serverName = X509ChainVerifier.isIPAddress(host) ? nil : host
        let digests = pinnedDigests(for: host)
        guard let verifier, !digests.isEmpty else {
            return try NIOSSLClientHandler(context: context, serverHostname: serverName)
        }
        return try NIOSSLClientHandler(context: context, serverHostname: serverName) { certificates, promise in
            let outcome = Self.check(certificates, host: host, verifier: verifier, digests: digests)
            if let failure = outcome { handler.tlsVerificationFailure = failure }
            promise.succeed(outcome == nil ? .certificateVerified : .failed)
        }
    }

    /// `nil` when the chain is trusted for `host` and carries a pinned key; otherwise the error.
    private static func check(
        _ certificates: [NIOSSLCertificate], host: String, verifier: X509ChainVerifier, digests: Set<[UInt8]>
    ) -> OIDCError? {
        var chain: [[UInt8]] = []
        for certificate in certificates {
            guard let der = try? certificate.toDERBytes() else {
                return OIDCError(.tlsFailure, "A certificate presented by \(host) could not be read.", context: ["host": host])
            }
            chain.append(der)
        }
        switch verifier.verify(chain: chain, host: host) {
        case .untrusted(let reason):
            return OIDCError(
                .tlsFailure,
                "The certificate of \(host) failed verification (\(reason)): check that it is valid for this host and issued by a trusted CA.",
                context: ["host": host]
            )
        case .trusted(let spkiDigests):
            guard spkiDigests.contains(where: digests.contains) else {
                return OIDCError(
                    .pinMismatch,
                    "No public key in the certificate chain of \(host) matches its pins; nothing was sent. If the server's keys changed, update the pins.",
                    context: ["host": host, "presented": spkiDigests.map { Data($0).base64EncodedString() }.joined(separator: " ")]
                )
            }
            return nil
        }
    }
}

/// NIOSSL's client context, made once on first use; a final class owning the context with its state
/// behind a lock, hence `@unchecked Sendable`.
final class LazySSLContext: @unchecked Sendable {
    private let lock = NSLock()
    private let configuration: TLSConfiguration
    private var made: Result<NIOSSLContext, OIDCError>?

    init(configuration: TLSConfiguration) {
        self.configuration = configuration
    }

    func get() throws(OIDCError) -> NIOSSLContext {
        let result = lock.withLock { () -> Result<NIOSSLContext, OIDCError> in
            if let made { return made }
            let result: Result<NIOSSLContext, OIDCError>
            do {
                result = .success(try NIOSSLContext(configuration: configuration))
            } catch {
                result = .failure(OIDCError(.tlsFailure, "NIOSSL refused the TLS configuration: \(error)."))
            }
            made = result
            return result
        }
        return try result.get()
    }
}
