import Foundation
import OIDC
import OIDCTesting
@testable import ReportDaemon
import Testing

/// The daemon's environment: what it makes, what it refuses, and how its files are read.
@Suite("Configuration from the environment")
struct ConfigurationTests {
    static let base = [
        "OIDC_ISSUER": "https://login.example.com", "OIDC_CLIENT_ID": "report-daemon", "OIDC_PRIVATE_KEY_FILE": "/etc/report-daemon/key.pem",
        "API_URL": "https://api.example.com/reports",
    ]

    @Test("a key file with its kid, or a secret file; scopes split on spaces; a token directory")
    func valid() throws {
        var environment = Self.base
        environment["OIDC_KEY_ID"] = "key-2026"
        environment["OIDC_SCOPE"] = " reports.read  reports.write "
        environment["OIDC_TOKEN_DIR"] = "/var/lib/report-daemon"
        let configuration = try DaemonConfiguration(environment: environment)
        #expect(configuration.credential == .privateKeyFile("/etc/report-daemon/key.pem", keyID: "key-2026"))
        #expect(configuration.scopes == ["reports.read", "reports.write"])
        #expect(configuration.tokenDirectory?.path == "/var/lib/report-daemon")
        #expect(configuration.api.host == "api.example.com")

        environment = Self.base
        environment["OIDC_PRIVATE_KEY_FILE"] = nil
        environment["OIDC_CLIENT_SECRET_FILE"] = "/etc/report-daemon/secret"
        let withSecret = try DaemonConfiguration(environment: environment)
        #expect(withSecret.credential == .clientSecretFile("/etc/report-daemon/secret"))
        #expect(withSecret.scopes.isEmpty && withSecret.tokenDirectory == nil)
    }

    @Test(
        "a missing or wrong variable is named, with what to do",
        arguments: [
            (["OIDC_ISSUER": nil], "OIDC_ISSUER"),
            (["OIDC_CLIENT_ID": " "], "OIDC_CLIENT_ID"),
            (["OIDC_PRIVATE_KEY_FILE": nil], "OIDC_PRIVATE_KEY_FILE"),
            (["OIDC_CLIENT_SECRET_FILE": "/etc/secret"], "OIDC_CLIENT_SECRET_FILE"),
            (["OIDC_CLIENT_SECRET": "hunter2-hunter2"], "OIDC_CLIENT_SECRET"),
            (["OIDC_PRIVATE_KEY_FILE": nil, "OIDC_CLIENT_SECRET_FILE": "/etc/secret", "OIDC_KEY_ID": "k1"], "OIDC_KEY_ID"),
            (["API_URL": "ftp://api.example.com"], "API_URL"),
            (["API_URL": nil], "API_URL"),
            (["OIDC_TOKEN_DIR": "tokens"], "OIDC_TOKEN_DIR"),
        ] as [([String: String?], String)]
    )
    func refused(_ changes: [String: String?], variable: String) {
        var environment = Self.base
        for (name, value) in changes { environment[name] = value }
        let error = #expect(throws: ConfigurationError.self) { try DaemonConfiguration(environment: environment) }
        #expect(error?.variable == variable)
        #expect(error?.description.hasPrefix(variable + ": ") == true)
        #expect(error?.description.contains("hunter2") == false)
        #expect(error.map { DaemonExit.status(for: $0) } == DaemonExit.configuration)
    }

    @Test("a secret file is used only when no other user can read it, is a regular file and holds something; it is never shown")
    func secretFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("secret", "s3cret-s3cret-s3cret\n", mode: 0o644)
        let credential = DaemonConfiguration.Credential.clientSecretFile(path)
        let open = #expect(throws: ConfigurationError.self) { try credential.authentication() }
        #expect(open?.variable == "OIDC_CLIENT_SECRET_FILE" && open?.problem.contains("chmod 600") == true)
        #expect(open?.description.contains("s3cret") == false)

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let authentication = try credential.authentication()
        #expect(authentication.method == .clientSecretBasic && authentication.secret == Secret("s3cret-s3cret-s3cret"))
        #expect(!"\(authentication)".contains("s3cret") && !String(reflecting: authentication).contains("s3cret"))

        let link = directory.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let linked = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.Credential.clientSecretFile(link).authentication() }
        #expect(linked?.variable == "OIDC_CLIENT_SECRET_FILE" && linked?.problem.contains(link) == true, "\(String(describing: linked))")
        let empty = try directory.file("empty", "\n", mode: 0o600)
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.Credential.clientSecretFile(empty).authentication() }
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.Credential.clientSecretFile(directory.path("missing")).authentication() }
    }

    @Test("a key file is read as the library reads it: refused when others can read it, or when it is not a key; the message names the variable")
    func keyFile() throws {
        let directory = try TemporaryDirectory()
        let pem = try TestSigningKey.generate(.es256).pem()
        let readable = try directory.file("key.pem", pem, mode: 0o644)
        let error = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.Credential.privateKeyFile(readable, keyID: nil).authentication() }
        #expect(error?.variable == "OIDC_PRIVATE_KEY_FILE" && error?.description.contains("PRIVATE KEY") == false)

        let notAKey = try directory.file("not-a-key.pem", "hello", mode: 0o600)
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.Credential.privateKeyFile(notAKey, keyID: nil).authentication() }

        let good = try directory.file("good.pem", pem, mode: 0o600)
        let authentication = try DaemonConfiguration.Credential.privateKeyFile(good, keyID: "k1").authentication()
        #expect(authentication.method == .privateKeyJWT && authentication.signingKey?.keyID == "k1")
        #expect("\(authentication)" == "private_key_jwt (JWSSigningKey(ES256, kid: k1))")
    }

    @Test("exit statuses a service manager can act on: refused 77, temporary 75, configuration 78")
    func exitStatuses() {
        let refused = OIDCError(.providerError, "refused", providerError: .init(error: "invalid_client"))
        #expect(DaemonExit.status(for: refused) == 77)
        #expect(DaemonExit.status(for: OIDCError(.networkFailure, "down")) == 75 && DaemonExit.isTransient(OIDCError(.serverError, "503")))
        #expect(!DaemonExit.isTransient(refused))
        #expect(DaemonExit.status(for: OIDCError(.hostNotAllowed, "http")) == 78)
        #expect(DaemonExit.status(for: CancellationError()) == 1)
    }
}

/// A directory of its own, removed when the value goes.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("report-daemon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// A file holding `text` with `mode`; its path.
    func file(_ name: String, _ text: String, mode: Int) throws -> String {
        let path = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }
}
