import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `--client-certificate`, `--client-key`, `--ca-file` and the mTLS client authentication methods
/// (RFC 8705), run as the built binary against TestProvider over loopback https.
@Suite("oidc mutual TLS", .timeLimit(.scaledMinutes(3)))
struct MutualTLSCommandTests {
    static let certificates = Task { try await TestCertificates.make() }

    static func configuration(_ certificates: TestCertificates, clients: [TestProvider.Client]) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: clients, tls: certificates.serverTLS)
        configuration.mutualTLS = TestProvider.MutualTLS(clientCertificateAuthoritiesPEM: [certificates.authority.certificatePEM])
        return configuration
    }

    static func login(_ provider: TestProvider, client: String, method: String, _ identity: TestCertificates.Identity, keyFile: String? = nil,
                      ca: TestCertificates.Identity?) -> [String] {
        ["login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", client, "--scope", "reports", "--profile", "bank",
         "--client-auth", method, "--client-certificate", identity.certificateFile, "--client-key", keyFile ?? identity.keyFile]
            + (ca.map { ["--ca-file", $0.certificateFile] } ?? [])
    }

    @Test("tls_client_auth: login through the mtls alias; the profile remembers the three paths, not the PEM; oidc request sends the bound token over the certificate; oidc introspect shows the binding; oidc token --force-refresh asks again through the alias")
    func tlsClientAuthRemembered() async throws {
        let certificates = try await Self.certificates.value
        let client = TestProvider.Client.tlsClientAuth(id: "bank-daemon", subjectDN: certificates.client.subjectDN)
        try await withTestProvider(Self.configuration(certificates, clients: [client])) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(Self.login(provider, client: "bank-daemon", method: "tls_client_auth", certificates.client, ca: certificates.authority))
            #expect(login.status == 0, "\(login.stderr)")
            #expect(await provider.mutualTLSRequestCount(.token) == 1)
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/bank.json", encoding: .utf8)
            #expect(profile.contains(#""client_certificate_file" : "\#(certificates.client.certificateFile)""#), "\(profile)")
            #expect(profile.contains(#""client_key_file" : "\#(certificates.client.keyFile)""#) && profile.contains(#""ca_file""#))
            #expect(!profile.contains("BEGIN"), "\(profile)")
            let stored = try #require(try sandbox.storedLogin("bank"))
            #expect(stored.provider?.clientAuthentication == .tlsClientAuth)

            let request = try await sandbox.run(["request", "--profile", "bank", provider.protectedResource.absoluteString])
            #expect(request.status == 0, "\(request.stderr)")
            #expect(request.stderr.contains("HTTP 200") && request.stdout.contains("bank-daemon"), "\(request.stdout) \(request.stderr)")

            // Introspection through its alias, with the profile's certificate: the token is bound to it.
            let introspect = try await sandbox.run(["introspect", "--profile", "bank"])
            #expect(introspect.status == 0, "\(introspect.stderr)")
            #expect(introspect.stdout.contains(certificates.client.thumbprint), "\(introspect.stdout)")
            #expect(await provider.mutualTLSRequestCount(.introspection) == 1)

            let token = try await sandbox.run(["token", "--profile", "bank", "--force-refresh"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(await provider.mutualTLSRequestCount(.token) == 2)
            #expect(!token.stdout.isEmpty && token.stdout != stored.tokens.accessToken.revealedValue + "\n")
            LoginCommandTests.expectNoSecret(login.stderr + request.stderr + token.stderr, stored.tokens, "stderr")
        }
    }

    @Test("self_signed_tls_client_auth; a certificate the provider does not know is invalid_client (exit 4)")
    func selfSigned() async throws {
        let certificates = try await Self.certificates.value
        let client = TestProvider.Client.selfSignedTLSClientAuth(id: "self-daemon", certificatesPEM: [certificates.selfSigned.certificatePEM])
        try await withTestProvider(Self.configuration(certificates, clients: [client])) { provider in
            let sandbox = LoginSandbox()
            let good = try await sandbox.run(Self.login(provider, client: "self-daemon", method: "self_signed_tls_client_auth", certificates.selfSigned, ca: certificates.authority))
            #expect(good.status == 0, "\(good.stderr)")
            let other = try await LoginSandbox().run(
                Self.login(provider, client: "self-daemon", method: "self_signed_tls_client_auth", certificates.otherSelfSigned, ca: certificates.authority))
            #expect(other.status == 4, "\(other.stderr)")
            #expect(other.stderr.contains("invalid_client"), "\(other.stderr)")
        }
    }

    @Test("refused before anything is sent: a key file others can read (exit 2, chmod 600), tls_client_auth without a certificate (exit 2), a certificate without its key (exit 2); without --ca-file the private CA is not trusted (exit 6)")
    func refusals() async throws {
        let certificates = try await Self.certificates.value
        let client = TestProvider.Client.tlsClientAuth(id: "bank-daemon", subjectDN: certificates.client.subjectDN)
        try await withTestProvider(Self.configuration(certificates, clients: [client])) { provider in
            let sandbox = LoginSandbox()
            let readable = try ClientCredentialsCommandTests.privateFile(sandbox, "readable.key", certificates.client.keyPEM, mode: 0o644)
            let open = try await sandbox.run(Self.login(provider, client: "bank-daemon", method: "tls_client_auth", certificates.client, keyFile: readable, ca: certificates.authority))
            #expect(open.status == 2, "\(open.stderr)")
            #expect(open.stderr.contains("--client-key") && open.stderr.contains("chmod 600"), "\(open.stderr)")
            #expect(!open.stderr.contains("PRIVATE KEY"), "\(open.stderr)")

            let missing = try await sandbox.run([
                "login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "bank-daemon", "--profile", "bank",
                "--client-auth", "tls_client_auth", "--ca-file", certificates.authority.certificateFile,
            ])
            #expect(missing.status == 2 && missing.stderr.contains("needs --client-certificate"), "\(missing.stderr)")
            let half = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "x", "--client-certificate", certificates.client.certificateFile])
            #expect(half.status == 2 && half.stderr.contains("go together"), "\(half.stderr)")
            #expect(await provider.requestCount(.token) == 0)

            let untrusted = try await sandbox.run(Self.login(provider, client: "bank-daemon", method: "tls_client_auth", certificates.client, ca: nil))
            #expect(untrusted.status == 6, "\(untrusted.stderr)")
            #expect(try sandbox.storedLogin("bank") == nil)
        }
    }

    @Test("--ca-file is read as a file that decides whom to trust: group- or other-writable refused (exit 2, --ca-file, chmod go-w), a link to such a file refused, a link to a good file and root's /etc/ssl/certs links accepted; nothing sent when refused")
    func caFileTrust() async throws {
        let certificates = try await Self.certificates.value
        let client = TestProvider.Client.tlsClientAuth(id: "bank-daemon", subjectDN: certificates.client.subjectDN)
        try await withTestProvider(Self.configuration(certificates, clients: [client])) { provider in
            let sandbox = LoginSandbox()
            func login(_ caFile: String) async throws -> CommandResult {
                try await sandbox.run(
                    Self.login(provider, client: "bank-daemon", method: "tls_client_auth", certificates.client, ca: nil) + ["--ca-file", caFile])
            }
            let pem = certificates.authority.certificatePEM
            for mode: mode_t in [0o664, 0o646, 0o666] {
                let open = try ClientCredentialsCommandTests.privateFile(sandbox, "open-\(String(mode, radix: 8)).pem", pem, mode: mode)
                let refused = try await login(open)
                #expect(refused.status == 2, "mode \(String(mode, radix: 8)): \(refused.stderr)")
                #expect(refused.stderr.contains("--ca-file") && refused.stderr.contains("chmod go-w \(open)"), "\(refused.stderr)")

                let link = sandbox.root.appendingPathComponent("link-to-open-\(String(mode, radix: 8)).pem").path
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: open)
                let throughLink = try await login(link)
                #expect(throughLink.status == 2, "\(throughLink.stderr)")
                #expect(throughLink.stderr.contains("--ca-file") && throughLink.stderr.contains("chmod go-w"), "\(throughLink.stderr)")
                #expect(throughLink.stderr.contains(open), "the message names the link's target: \(throughLink.stderr)")
            }
            #expect(await provider.requestCount(.token) == 0)
            #expect(try sandbox.storedLogin("bank") == nil)

            // A file of yours that only you can write, through a link of yours (and a link to that link): trusted.
            let good = try ClientCredentialsCommandTests.privateFile(sandbox, "good.pem", pem, mode: 0o644)
            let link = sandbox.root.appendingPathComponent("link-to-good.pem").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
            let chained = sandbox.root.appendingPathComponent("link-to-link.pem").path
            try FileManager.default.createSymbolicLink(atPath: chained, withDestinationPath: link)
            for path in [link, chained] {
                let accepted = try await login(path)
                #expect(accepted.status == 0, "\(accepted.stderr)")
            }
            #expect(await provider.requestCount(.token) == 2)

            // The profile now remembers the link; its target turned group-writable is refused at the next refresh too.
            _ = chmod(good, 0o664)
            let refresh = try await sandbox.run(["token", "--profile", "bank", "--force-refresh"])
            #expect(refresh.status == 2 && refresh.stderr.contains("--ca-file"), "\(refresh.stderr)")
            #expect(await provider.requestCount(.token) == 2)

            // Planted by another local user (made by that user: see OtherUser): their CA file, readable
            // and writable by them only, is theirs to change; so is their link to our good file.
            if OtherUser.available, let other = OtherUser.ids {
                _ = chmod(good, 0o644)
                let theirs = try await OtherUser.makeDirectory(files: ["ca.pem": pem])
                try await OtherUser.run(["/bin/ln", "-s", good, theirs + "/link.pem"])
                let planted = try await login(theirs + "/ca.pem")
                let linked = try await login(theirs + "/link.pem")
                try await OtherUser.remove(theirs)
                #expect(planted.status == 2 && planted.stderr.contains("--ca-file"), "\(planted.stderr)")
                #expect(planted.stderr.contains("belongs to user id \(other.uid)"), "\(planted.stderr)")
                #expect(linked.status == 2 && linked.stderr.contains("is a symbolic link of user id \(other.uid)"), "\(linked.stderr)")
                #expect(await provider.requestCount(.token) == 2)
            }

            // The system's CA files are root's links to root's files: accepted (the test CA is then not trusted: exit 6, not 2).
            if let system = Self.systemCertificateLink() {
                let systemCA = try await login(system)
                #expect(systemCA.status == 6, "\(system): \(systemCA.stderr)")
                #expect(!systemCA.stderr.contains("--ca-file"), "\(systemCA.stderr)")
            }
        }
    }

    /// A link in `/etc/ssl/certs` (root's) to a root's file others cannot write, when the system has one.
    static func systemCertificateLink() -> String? {
        let directory = "/etc/ssl/certs"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".pem") }.sorted() ?? []
        for name in names {
            let path = directory + "/" + name
            var link = stat()
            var target = stat()
            guard lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK, link.st_uid == 0, stat(path, &target) == 0,
                  target.st_mode & S_IFMT == S_IFREG, target.st_uid == 0, target.st_mode & 0o022 == 0 else { continue }
            return path
        }
        return nil
    }
}
