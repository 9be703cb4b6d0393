internal import Foundation

/// The certificate and private key a client presents when a server asks for one during the TLS
/// handshake: mutual TLS, for `tls_client_auth` and `self_signed_tls_client_auth` client
/// authentication and for certificate-bound access tokens (RFC 8705).
///
/// ```swift
/// let certificate = try TLSClientCertificate(chainFile: "/etc/my-daemon/client.crt", keyFile: "/etc/my-daemon/client.key")
/// let transport = NIOHTTPTransport(configuration: .init(clientCertificate: certificate))
/// ```
///
/// Give it to ``NIOHTTPTransport/Configuration/clientCertificate``; the transport then presents it to
/// every https server that asks, the provider and the APIs alike, so the session's requests carry a
/// certificate-bound token over the same certificate it was bound to.
///
/// Printing it never shows the key; the key is held as a ``Secret``.
public struct TLSClientCertificate: Sendable, CustomStringConvertible {
    /// The client certificate first, then any intermediates, PEM (`-----BEGIN CERTIFICATE-----`).
    public var chainPEM: String
    /// The certificate's private key, unencrypted PEM (PKCS#8 `PRIVATE KEY`, SEC1 `EC PRIVATE KEY`
    /// or PKCS#1 `RSA PRIVATE KEY`).
    public var privateKeyPEM: Secret

    /// A certificate chain (leaf first) and its private key, both PEM. Nothing is checked here:
    /// ``NIOHTTPTransport/Configuration/validate()`` and the transport check them.
    public init(chainPEM: String, privateKeyPEM: Secret) {
        self.chainPEM = chainPEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// The largest certificate chain or key file read.
    package static let maximumFileSize = 256 * 1024

    /// A certificate chain and its private key read from files. The key file is read as a secret
    /// (like ``Secret/fromFile(atPath:)``): through one descriptor opened without following a link,
    /// and only from a regular file of yours (or root's) that no other user may read or write
    /// (`chmod 600`). The certificate is public and read as it is.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` naming the path when a file is missing, empty,
    ///   too large or not PEM of the right kind; ``OIDCError/Code/storageFailure`` when the key file
    ///   is a link, not a regular file, another user's, or open to others (the message says to
    ///   `chmod 600`).
    public init(chainFile: String, keyFile: String) throws(OIDCError) {
        guard let chainData = FileManager.default.contents(atPath: chainFile) else {
            throw OIDCError(.invalidArgument, "There is no readable certificate file at \(chainFile).", context: ["path": chainFile])
        }
        guard chainData.count <= Self.maximumFileSize else {
            throw OIDCError(.invalidArgument, "\(chainFile) is over \(Self.maximumFileSize) bytes: it is not a certificate chain.", context: ["path": chainFile])
        }
        let chain = String(decoding: chainData, as: UTF8.self)
        guard chain.contains("-----BEGIN CERTIFICATE-----") else {
            throw OIDCError(
                .invalidArgument, "\(chainFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the client certificate, leaf first.",
                context: ["path": chainFile])
        }
        let read: [UInt8]?
        do { read = try PrivateFile.readSecret(keyFile, limit: Self.maximumFileSize) } catch where error.code == .corruptStore {
            throw OIDCError(.invalidArgument, "\(keyFile) is over \(Self.maximumFileSize) bytes: it is not a private key.", context: ["path": keyFile])
        }
        guard var bytes = read else {
            throw OIDCError(.invalidArgument, "There is no private key file at \(keyFile).", context: ["path": keyFile])
        }
        defer { LibCrypto.cleanse(&bytes) }
        let key = String(decoding: bytes, as: UTF8.self)
        guard key.contains("PRIVATE KEY-----") else {
            throw OIDCError(
                .invalidArgument, "\(keyFile) holds no PEM private key (-----BEGIN PRIVATE KEY-----): give the unencrypted key of the client certificate.",
                context: ["path": keyFile])
        }
        self.init(chainPEM: chain, privateKeyPEM: Secret(key))
    }

    /// `TLS client certificate (key <redacted>)`: never the key.
    public var description: String { "TLS client certificate (key <redacted>)" }
}
