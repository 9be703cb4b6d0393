internal import OIDC

/// `tls_client_auth` and `self_signed_tls_client_auth` (RFC 8705 §2): the client is who its TLS
/// client certificate says.
enum MutualTLSClientCheck {
    /// - Throws: `invalid_client` without a certificate, or with one that is not the client's: for
    ///   `tls_client_auth`, issued by none of the trusted authorities or with another subject; for
    ///   `self_signed_tls_client_auth`, none of the registered certificates.
    static func authenticate(_ client: TestProvider.Client, certificate: [UInt8]?, _ context: ProviderContext) throws(OAuthError) {
        guard let certificate else {
            throw .invalidClient("The client authenticates with \(client.authentication.rawValue) and presented no TLS client certificate.")
        }
        switch client.authentication {
        case .tlsClientAuth:
            let authorities = context.configuration.mutualTLS?.clientCertificateAuthoritiesPEM ?? []
            guard ClientCertificateCheck.isIssued(certificate, byAnyOf: authorities) else {
                throw .invalidClient("The TLS client certificate is not issued by a certificate authority this provider trusts, or is not valid now.")
            }
            guard let subject = ClientCertificateCheck.subjectDN(der: certificate), subject == client.tlsClientAuthSubjectDN else {
                throw .invalidClient("The TLS client certificate's subject is not the one registered for this client.")
            }
        default:
            guard client.registeredCertificates.contains(certificate) else {
                throw .invalidClient("The TLS client certificate is not one registered for this client.")
            }
        }
    }
}
