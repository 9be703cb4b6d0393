internal import Foundation

/// The provider pipeline's mutual TLS check (RFC 8705): a client that authenticates with
/// `tls_client_auth` or `self_signed_tls_client_auth` sends nothing without a certificate to
/// present. Its requests already go to the provider's `mtls_endpoint_aliases`, chosen once when
/// the ``TokenClient`` is made (``TokenClient/usesMutualTLS``), so that the client assertion's
/// audience and the DPoP proof's `htu` name the alias the request goes to.
struct MutualTLSStage: ProviderStage {
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse {
        let method = request.client.authentication.method
        if !request.call.carriesAccessToken, method.isMutualTLS, !request.client.transport.presentsClientCertificate {
            throw .invalidArgument(
                "The client authenticates with \(method.rawValue), and its transport presents no TLS client certificate; give one (NIOHTTPTransport.Configuration.clientCertificate, oidc --client-certificate and --client-key)."
            )
        }
        return try await next(request)
    }
}
