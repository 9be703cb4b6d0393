import ArgumentParser
import Foundation
import OIDC

/// Mutual TLS and a private certificate authority (RFC 8705; kubelogin's `--certificate-authority`):
/// a client certificate and key the transport presents to the provider and to the APIs
/// `oidc request` calls, and more trusted roots. `oidc login` remembers the paths in the profile,
/// never the contents; the other commands that take these flags use them for one run (the help
/// says so on every command, since one option group serves them all).
struct TLSOptions: ParsableArguments {
    @Option(help: "A TLS client certificate (PEM, leaf first) presented to the provider and the APIs: mutual TLS for --client-auth tls_client_auth or self_signed_tls_client_auth, and certificate-bound tokens (RFC 8705). Needs --client-key. oidc login remembers the path in the profile; any other command uses it for this run only.")
    var clientCertificate: String?

    @Option(help: "The client certificate's private key (unencrypted PEM); only you may read it (chmod 600). oidc login remembers the path in the profile; any other command uses it for this run only.")
    var clientKey: String?

    @Option(help: "A certificate authority (PEM) trusted for the provider and the APIs, besides the system's (a bank sandbox's private CA): a file of yours or root's that only its owner may write (chmod go-w), or a link to one. oidc login remembers the path in the profile; any other command uses it for this run only.")
    var caFile: String?

    func validate() throws {
        if (clientCertificate == nil) != (clientKey == nil) {
            throw ValidationError("--client-certificate and --client-key go together: give both")
        }
    }

    /// The transport configuration of a command that uses a stored login: these flags, else the
    /// profile's settings (when the profile is configured for the login: `profile` is the bound one).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` (exit 2) naming the flag when a file cannot be used.
    func transportConfiguration(over profile: Profile?) throws -> NIOHTTPTransport.Configuration {
        var profile = profile ?? Profile()
        try profile.lay(self)
        return try profile.transportConfiguration()
    }
}

extension Profile {
    /// The transport of this profile: its CA file trusted besides the system's roots, its client
    /// certificate and key presented to servers that ask. The key file is read as a secret: refused
    /// when it is a link, another user's, or readable by others.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` (exit 2) naming the flag and the file.
    func transportConfiguration() throws(OIDCError) -> NIOHTTPTransport.Configuration {
        var configuration = NIOHTTPTransport.Configuration()
        if let caFile {
            configuration.additionalTrustRootsPEM = [try Self.readCAFile(caFile)]
        }
        if let certificate = clientCertificateFile, let key = clientKeyFile {
            do { configuration.clientCertificate = try TLSClientCertificate(chainFile: certificate, keyFile: key) } catch {
                let flag = error.context["path"] == key ? "--client-key" : "--client-certificate"
                throw OIDCError(.invalidArgument, "\(flag): \(error.message)", context: error.context)
            }
        }
        // OIDC_HTTP_TIMEOUT bounds every request of every command (a command's --timeout, where it
        // has one, is laid over it).
        do { configuration.maximumRequestTimeout = try NetworkTimeout.environment().map { .seconds($0) } } catch {
            throw OIDCError(.invalidArgument, (error as? ValidationError)?.message ?? "\(error)")
        }
        do { try configuration.validate() } catch {
            let flag = caFile != nil && error.message.contains("trust root") ? "--ca-file" : "--client-certificate/--client-key"
            throw OIDCError(.invalidArgument, "\(flag): \(error.message)", context: error.context)
        }
        return configuration
    }

    /// The `--ca-file` at `path`, read as the files that decide whom to trust are
    /// (``PrivateFile/readTrusted(_:limit:)``): a regular file of yours or root's that no one else
    /// can write, or a link (yours or root's) to one, such as root's `/etc/ssl/certs/*.pem`. The
    /// profile remembers the path, so a file another user could create or change there (in `/tmp`
    /// after a reboot, in a group-writable directory) would let them add a CA for every later
    /// command of the profile.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` (exit 2) naming `--ca-file` and what to do.
    static func readCAFile(_ path: String) throws(OIDCError) -> String {
        let limit = TLSClientCertificate.maximumFileSize
        let data: [UInt8]?
        do { data = try PrivateFile.readTrusted(path, limit: limit) } catch {
            let message = error.code == .corruptStore ? "\(path) is over \(limit) bytes: it is not a certificate file." : error.message
            throw OIDCError(.invalidArgument, "--ca-file: \(message)", context: ["path": path])
        }
        guard let data else {
            throw OIDCError(.invalidArgument, "--ca-file: there is no readable certificate file at \(path).", context: ["path": path])
        }
        return String(decoding: data, as: UTF8.self)
    }
}
