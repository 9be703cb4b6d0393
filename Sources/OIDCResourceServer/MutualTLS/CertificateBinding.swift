internal import OIDC

/// RFC 8705 §3: a token whose `cnf` carries `x5t#S256` is taken only over a connection whose client
/// certificate has that SHA-256 thumbprint.
enum CertificateBinding {
    /// The thumbprint checked; throws when the connection presented no certificate or another one.
    static func check(_ bound: String, peerCertificate: [UInt8]?) throws(Denial) -> String {
        guard let peerCertificate, !peerCertificate.isEmpty else {
            throw .invalidToken(.certificateMismatch, "The access token is bound to a client certificate, and the connection presented none.")
        }
        guard let presented = try? ClientCertificateCheck.thumbprint(der: peerCertificate), ConstantTime.equals(presented, bound) else {
            throw .invalidToken(.certificateMismatch, "The access token is bound to another client certificate than the one the connection presented.")
        }
        return presented
    }
}
