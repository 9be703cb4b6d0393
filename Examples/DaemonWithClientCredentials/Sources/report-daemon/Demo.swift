import Foundation
import OIDC
import OIDCTesting

/// `--demo`: OIDCTesting's provider on 127.0.0.1 with the daemon registered as a `private_key_jwt`
/// client, and the daemon run against it several times as an operator would run it: the same
/// command, configured by the same variables, with its key in a file. Each step checks what the
/// provider counted, so a demo that says "one token request" has seen exactly one.
enum Demo {
    static let clientID = "report-daemon"
    static let keyID = "report-daemon-demo"

    static func run() async -> Int32 {
        do {
            try await steps()
            return 0
        } catch {
            say("demo: \(error)", to: .standardError)
            return 1
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func steps() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-daemon-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }

        // The operator's part: a key pair, its private half in a file only this user can read, its
        // public half registered at the provider (report-daemon --public-jwks prints it).
        let key = try TestSigningKey.generate(.es256, keyID: keyID)
        let keyFile = try privateFile(directory, "client-key.pem", key.pem())
        var client = TestProvider.Client.privateKeyJWT(id: clientID, jwks: try key.jwksJSON)
        client.allowedScopes = ["reports.read"]

        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            say("demo: a provider is running at \(provider.issuer), with \(clientID) registered by the public half of a new ES256 key (kid \(keyID)); the private key is in \(keyFile) (0600).")
            let environment = [
                "OIDC_ISSUER": provider.issuer, "OIDC_CLIENT_ID": clientID, "OIDC_PRIVATE_KEY_FILE": keyFile, "OIDC_KEY_ID": keyID,
                "OIDC_SCOPE": "reports.read", "API_URL": provider.protectedResourceURL, "OIDC_TOKEN_DIR": directory.appendingPathComponent("tokens").path,
            ]
            say("demo: the daemon's environment: " + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))

            func tokenRequests(_ expected: Int, _ why: String) async throws {
                let counted = await provider.grantCount("client_credentials")
                say("demo: token requests at the provider so far: \(counted) (\(why))")
                guard counted == expected else { throw Failure(description: "expected \(expected) token requests, the provider counted \(counted)") }
            }

            var debug = environment
            debug["LOG_LEVEL"] = "debug"  // the library's own lines: one token request, and why
            try await daemon(["--parallel", "10"], debug, expecting: 0)
            try await tokenRequests(1, "one for ten concurrent requests")

            say("demo: a second run, another process, finds the token in OIDC_TOKEN_DIR:")
            try await daemon(["--parallel", "10"], environment, expecting: 0)
            try await tokenRequests(1, "the stored token was used")

            say("demo: the provider expires every access token (as a revocation would); the API answers 401 to it:")
            await provider.expireAccessTokens()
            try await daemon(["--parallel", "10"], environment, expecting: 0)
            try await tokenRequests(2, "one new token on the 401s, for all ten")

            try await daemon(["--check"], environment, expecting: 0)

            say("demo: on another host, without the stored token, a key the provider does not know signs the assertion:")
            let stranger = try privateFile(directory, "other-key.pem", TestSigningKey.generate(.es256, keyID: keyID).pem())
            var refused = environment
            refused["OIDC_PRIVATE_KEY_FILE"] = stranger
            refused["OIDC_TOKEN_DIR"] = nil
            try await daemon([], refused, expecting: 77)
        }
    }

    /// Runs the daemon with `arguments` and `environment` as `report-daemon` would, checking its exit status.
    static func daemon(_ arguments: [String], _ environment: [String: String], expecting expected: Int32) async throws {
        say((["$ report-daemon"] + arguments).joined(separator: " "))
        let status = await (try ReportDaemonCommand.parse(arguments)).run(environment: environment)
        say("exit status \(status)")
        guard status == expected else { throw Failure(description: "report-daemon \(arguments) exited with \(status), not \(expected)") }
    }

    /// `text` in a new file of `directory` that only this user can read; its path.
    static func privateFile(_ directory: URL, _ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw Failure(description: "could not write \(path)")
        }
        return path
    }
}
