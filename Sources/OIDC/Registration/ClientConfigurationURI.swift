internal import Foundation
internal import Logging

/// Where a registration's `registration_client_uri` (RFC 7592 §3) may be: the client configuration
/// endpoint receives the registration access token at every later login (the §2.1 read), so it is
/// taken only on the origin of the registration endpoint the client was registered at, or of the
/// issuer (security review 5, I2). On any other origin it is left out, with a notice: the
/// registration is kept without it, so its token is never sent, and a server that later forgets
/// the client is found as without RFC 7592 (`oidc login --new-registration`).
enum ClientConfigurationURI {
    /// `uri` when it is on the origin of `registrationEndpoint` or `issuer`; `nil` otherwise. Applied
    /// to a registration's answer, and again to a kept registration before it is used (one kept by
    /// an earlier version, which took any origin).
    static func accepted(_ uri: URL?, registrationEndpoint: URL?, issuer: String, logger: Logger) -> URL? {
        guard let uri else { return nil }
        let origin = origin(of: uri)
        if origin != nil, origin == registrationEndpoint.flatMap(self.origin(of:)) || origin == URL(string: issuer).flatMap(self.origin(of:)) {
            return uri
        }
        logger.notice(
            "the registration's registration_client_uri is on another origin than the registration endpoint and the issuer; left out (RFC 7592 reads are not sent there)",
            metadata: ["issuer": .issuer(issuer), "registration_client_uri": .endpoint(uri)])
        return nil
    }

    /// `scheme://host:port`, lower case, the port explicit (80 for http, 443 for https).
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        guard let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) else { return nil }
        return "\(scheme)://\(host):\(port)"
    }
}
