import Foundation
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The command's side of the guard of issue 28 (the library's is `UnprivilegedSocketsTests`):
/// `oidc demo --headless` uses all three of the library's socket bootstraps (the embedded provider
/// accepts, the loopback listener accepts, the transport connects). It must work as whoever runs
/// the suite, and, when that is root, also as root without `CAP_NET_ADMIN` (Docker's and
/// Kubernetes' default), where `SO_DEBUG` once made every connection fail.
@Suite("oidc works without privileges", .timeLimit(.scaledMinutes(2)))
struct UnprivilegedCommandTests {
    static func expectDemo(_ result: CommandResult, _ who: String) {
        #expect(result.status == 0, "oidc demo --headless as \(who): exit \(result.status): \(result.stderr)")
        #expect((result.stdout + result.stderr).contains("6. logged out: 1 revocation request"), "oidc demo --headless as \(who): \(result.stdout) \(result.stderr)")
    }

    @Test("oidc demo --headless (provider, loopback listener, transport) as this user, and as root without CAP_NET_ADMIN when this is root")
    func demo() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-demo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state", "XDG_RUNTIME_DIR": "", "BROWSER": "", "DISPLAY": ""]
        Self.expectDemo(try await OIDCBinary.run(["demo", "--headless"], environment: environment, timeout: .scaled(.seconds(90))), "uid \(getuid())")

        let setpriv = "/usr/bin/setpriv"
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let unprivileged = try await OIDCBinary.run(
            ["--bounding-set=-net_admin", "--inh-caps=-net_admin", "--", OIDCBinary.url.path, "demo", "--headless"],
            environment: environment, timeout: .scaled(.seconds(90)), executable: URL(fileURLWithPath: setpriv))
        Self.expectDemo(unprivileged, "root without CAP_NET_ADMIN")
    }
}
