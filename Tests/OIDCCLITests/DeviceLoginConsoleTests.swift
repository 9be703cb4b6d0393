import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// What `oidc login` writes to a stderr that is not a terminal during a device login, and which flow
/// `--flow auto` takes with `--no-browser`; the built binary against TestProvider over loopback HTTP.
@Suite("oidc login: the console off a terminal, and --flow auto with --no-browser", .timeLimit(.scaledMinutes(3)))
struct DeviceLoginConsoleTests {
    @Test("a device login whose stderr is a pipe writes no terminal control: the retry line has no \\r ESC[K")
    func noEscapesOffATerminal() async throws {
        try await DeviceLoginCommandTests.deviceProvider { provider in
            await provider.failNextTokenRequests(1, with: .htmlError(status: 502))
            let sandbox = LoginSandbox()
            async let approved = DeviceLoginCommandTests.decide(provider)
            let login = try await sandbox.run(DeviceLoginCommandTests.arguments(provider, ["--flow", "device"]), extra: DeviceLoginCommandTests.headless)
            _ = try await approved
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("Trying again in"), "\(login.stderr)")
            #expect(!login.stderr.contains("\u{1B}") && !login.stderr.contains("\r"), "\(login.stderr.debugDescription)")
            #expect(login.stderr.split(separator: "\n").contains { $0.hasPrefix("oidc: ") && $0.contains("Trying again in") })
        }
    }

    @Test("--flow auto with --no-browser and no browser here prints the loopback URL to open (the browser flow), not a device code")
    func autoWithNoBrowser() async throws {
        try await DeviceLoginCommandTests.deviceProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(
                DeviceLoginCommandTests.arguments(provider, ["--no-browser", "--timeout", "\(TestTime.scaled(1))"]), extra: DeviceLoginCommandTests.headless)
            #expect(login.status == 3, "\(login.stderr)")
            #expect(login.stderr.contains("in your browser: http://127.0.0.1:"), "\(login.stderr)")
            #expect(!login.stderr.contains("enter the code") && !login.stderr.contains("device flow"), "\(login.stderr)")
            #expect(await provider.requestCount(.deviceAuthorization) == 0)
            #expect(sandbox.log.isEmpty)
        }
    }
}
