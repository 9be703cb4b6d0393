import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs every example in a `sh` block of docs/cli.md, in order, against TestProvider:
/// `https://login.example.com` and `https://api.example.com` stand for its issuer (`api.example.com`
/// alone for its host), `my-cli` for its client. Each line runs in `/bin/sh` with the built `oidc` first on PATH and must exit 0.
@Suite("docs/cli.md examples", .timeLimit(.scaledMinutes(3)))
struct CLIReferenceTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/cli.md")

    /// The command lines of the `sh` blocks, in order.
    static func examples() throws -> [String] {
        let text = try String(contentsOf: page, encoding: .utf8)
        var lines: [String] = []
        var inShell = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inShell = !inShell && line == "```sh"
                continue
            }
            if inShell, !line.trimmingCharacters(in: .whitespaces).isEmpty { lines.append(String(line)) }
        }
        return lines
    }

    @Test("every sh example in docs/cli.md runs and exits 0")
    func everyExampleRuns() async throws {
        let examples = try Self.examples()
        #expect(examples.count >= 20)
        #expect(examples.first?.hasPrefix("oidc login --issuer") == true)
        // `my-daemon` is the confidential client of the client-credentials examples, its secret in `daemon.secret`.
        var configuration = TestProvider.Configuration(authorizeBehaviour: .loginPage)
        configuration.clients.append(.confidential(id: "my-daemon", secret: Self.daemonSecret))
        configuration.deviceFlow = .init(interval: 1)
        // `my-workload` holds a JWT of a workload issuer the provider trusts, in the file the JWT bearer example names.
        configuration.clients.append(TestProvider.Client(id: "my-workload", authentication: .none, redirectURIs: []))
        let workloadKey = try TestSigningKey.generate(.es256)
        configuration = try WorkloadAssertion.trusting(workloadKey, in: configuration)
        try await withTestProvider(configuration) { provider in
            let sandbox = LoginSandbox()
            let secretFile = sandbox.root.appendingPathComponent("daemon.secret").path
            try Self.daemonSecret.write(toFile: secretFile, atomically: false, encoding: .utf8)
            _ = chmod(secretFile, 0o600)
            let assertionFile = sandbox.root.appendingPathComponent("oidc-token").path
            try WorkloadAssertion.make(workloadKey, audience: provider.issuer).revealedValue.write(toFile: assertionFile, atomically: false, encoding: .utf8)
            _ = chmod(assertionFile, 0o600)
            var environment = sandbox.environment()
            environment["PATH"] = OIDCBinary.url.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            for example in examples {
                let command = example
                    .replacingOccurrences(of: "https://login.example.com", with: provider.issuer)
                    .replacingOccurrences(of: "https://api.example.com", with: provider.issuer)
                    .replacingOccurrences(of: "api.example.com", with: "127.0.0.1")
                    .replacingOccurrences(of: "my-cli", with: TestProvider.Client.default.id)
                    .replacingOccurrences(of: "daemon.secret", with: secretFile)
                    .replacingOccurrences(of: "/var/run/secrets/tokens/oidc-token", with: assertionFile)
                let result = try await Self.shell(command, environment: environment)
                #expect(result.status == 0, "docs/cli.md: `\(example)` exited \(result.status): \(result.stderr)")
            }
        }
    }

    static let daemonSecret = "my-daemon-secret-0123456789abcdefghijkl"

    static func shell(_ command: String, environment: [String: String]) async throws -> CommandResult {
        try await OIDCBinary.run(["-c", command], environment: environment, timeout: .scaled(.seconds(90)), executable: URL(fileURLWithPath: "/bin/sh"))
    }
}
