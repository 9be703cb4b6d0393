internal import Foundation
internal import OIDC

/// A certificate authority, a server certificate for `127.0.0.1`, `::1` and `localhost`, and client
/// certificates, made at test time with the `openssl` command (through ``ChildProcess``, never
/// Foundation's `Process`) in a new private directory: for mutual-TLS tests (RFC 8705). EC P-256
/// keys, valid for a day; every key file is `0600`.
package struct TestCertificates: Sendable {
    /// A certificate and its key, as files and as PEM.
    package struct Identity: Sendable {
        package let certificateFile: String
        package let keyFile: String
        package let certificatePEM: String
        package let keyPEM: String
        /// The subject, as RFC 4514 text (`CN=…`).
        package let subjectDN: String
        /// The certificate's `x5t#S256` (RFC 8705 §3.1).
        package let thumbprint: String
    }

    /// The directory that holds every file.
    package let directory: String
    /// The certificate authority (its key signs the others).
    package let authority: Identity
    /// A server certificate the authority issued for `127.0.0.1`, `::1` and `localhost`.
    package let server: Identity
    /// Client certificates the authority issued: subjects `CN=mtls-client` and `CN=other-client`.
    package let client: Identity
    package let otherClient: Identity
    /// Self-signed client certificates: subjects `CN=self-signed-client` and `CN=other-self-signed`.
    package let selfSigned: Identity
    package let otherSelfSigned: Identity

    /// The authority's certificate and the server's, for ``TestProvider/Configuration/tls``.
    package var serverTLS: TestProvider.TLS {
        TestProvider.TLS(certificateChainPEM: server.certificatePEM, privateKeyPEM: server.keyPEM)
    }

    /// Makes them all in a new directory under the temporary directory.
    ///
    /// - Throws: ``ChildProcessError`` when `openssl` is missing or fails.
    package static func make(openssl: String = "/usr/bin/openssl") async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-mtls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let maker = Maker(openssl: openssl, directory: directory)
        let authority = try await maker.selfSigned("ca", subject: "Test CA", extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"])
        let server = try await maker.issued(
            "server", subject: "127.0.0.1", by: authority,
            extensions: ["subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost", "extendedKeyUsage=serverAuth"])
        let clientExtensions = ["extendedKeyUsage=clientAuth"]
        return TestCertificates(
            directory: directory, authority: authority, server: server,
            client: try await maker.issued("client", subject: "mtls-client", by: authority, extensions: clientExtensions),
            otherClient: try await maker.issued("other-client", subject: "other-client", by: authority, extensions: clientExtensions),
            selfSigned: try await maker.selfSigned("self-signed", subject: "self-signed-client", extensions: clientExtensions),
            otherSelfSigned: try await maker.selfSigned("other-self-signed", subject: "other-self-signed", extensions: clientExtensions)
        )
    }

    /// Removes the directory and everything in it.
    package func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private struct Maker {
        let openssl: String
        let directory: String

        func selfSigned(_ name: String, subject: String, extensions: [String]) async throws -> Identity {
            let (certificate, key) = paths(name)
            try await run(
                ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", certificate,
                 "-days", "1", "-subj", "/CN=\(subject)"] + extensions.flatMap { ["-addext", $0] })
            return try identity(certificate, key, subject: subject)
        }

        func issued(_ name: String, subject: String, by authority: Identity, extensions: [String]) async throws -> Identity {
            let (certificate, key) = paths(name)
            let request = directory + "/\(name).csr"
            try await run(
                ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
                 "-subj", "/CN=\(subject)"] + extensions.flatMap { ["-addext", $0] })
            try await run(
                ["x509", "-req", "-in", request, "-CA", authority.certificateFile, "-CAkey", authority.keyFile, "-set_serial",
                 String(UInt32.random(in: 1...UInt32.max)), "-days", "1", "-copy_extensions", "copyall", "-out", certificate])
            return try identity(certificate, key, subject: subject)
        }

        private func paths(_ name: String) -> (certificate: String, key: String) {
            (directory + "/\(name).crt", directory + "/\(name).key")
        }

        private func identity(_ certificate: String, _ key: String, subject: String) throws -> Identity {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
            // Whatever the umask: `oidc --ca-file` refuses a certificate file group or others can write.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: certificate)
            let certificatePEM = try String(contentsOfFile: certificate, encoding: .utf8)
            let der = try TestCertificates.der(certificatePEM)
            return Identity(
                certificateFile: certificate, keyFile: key, certificatePEM: certificatePEM, keyPEM: try String(contentsOfFile: key, encoding: .utf8),
                subjectDN: "CN=\(subject)", thumbprint: try ClientCertificateCheck.thumbprint(der: der))
        }

        private func run(_ arguments: [String]) async throws {
            let process = try ChildProcess(openssl, arguments)
            _ = await process.output()
            let status = await process.exitStatus()
            guard status == 0 else {
                throw ChildProcessError("openssl \(arguments.first ?? "") exited with \(status): \(await process.errors())")
            }
        }
    }

    /// The DER of the first certificate of `pem`.
    package static func der(_ pem: String) throws -> [UInt8] {
        let body = pem.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().first?
            .components(separatedBy: "-----END CERTIFICATE-----").first?
            .filter { !$0.isWhitespace } ?? ""
        guard let data = Data(base64Encoded: body) else { throw ChildProcessError("not a PEM certificate") }
        return Array(data)
    }
}
