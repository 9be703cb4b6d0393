/// What a server checks of a TLS client certificate (RFC 8705): its subject name, whether a
/// certificate authority issued it, and its `x5t#S256` thumbprint. For `OIDCTesting`'s provider and
/// resource server; clients never need it.
package enum ClientCertificateCheck {
    /// The subject of a DER certificate as RFC 4514 text (`CN=swift-mtls,O=Example`), what
    /// `tls_client_auth_subject_dn` registers (RFC 8705 §2.1.2); `nil` for bytes that are not a certificate.
    package static func subjectDN(der: [UInt8]) -> String? {
        X509Certificate(der: der)?.subjectDN
    }

    /// Whether the DER certificate `der` is valid now for TLS client authentication and issued by one
    /// of `authoritiesPEM` (each string one or more PEM certificates), without intermediates.
    package static func isIssued(_ der: [UInt8], byAnyOf authoritiesPEM: [String]) -> Bool {
        guard !authoritiesPEM.isEmpty, let verifier = try? X509ChainVerifier(trustsSystemRoots: false, additionalRootsPEM: authoritiesPEM) else {
            return false
        }
        if case .trusted = verifier.verify(chain: [der], host: nil) { return true }
        return false
    }

    /// The certificate's `x5t#S256` (RFC 8705 §3.1): base64url without padding of the SHA-256 of its DER.
    package static func thumbprint(der: [UInt8]) throws(OIDCError) -> String {
        Base64URLEncoding.encode(try LibCrypto.sha256(der))
    }
}
