import Foundation
import OIDC
import OIDCTestSupport

/// A throw-away home for one CLI login test: its own config (profiles), state (store) and runtime
/// (the browser's private pages) directories, and the test browser as `$BROWSER`, so no test
/// touches the user's files.
struct LoginSandbox {
    let root: URL
    var config: String { root.appendingPathComponent("config").path }
    var state: String { root.appendingPathComponent("state").path }
    var store: String { state + "/oidc" }
    /// `$XDG_RUNTIME_DIR`, 0700: where the browser's private redirect pages are written.
    var runtime: String { root.appendingPathComponent("run").path }
    var browserLog: String { root.appendingPathComponent("browser.log").path }

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-login-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: root.appendingPathComponent("run"), withIntermediateDirectories: true)
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: root.appendingPathComponent("run").path)
    }

    /// The test browser command with `options` (`--deny`, `--value sub=…`, `--forge-callback-first`).
    func browser(_ options: [String] = []) -> String {
        ([OIDCBinary.sibling("oidc-test-browser")] + options + ["--log", browserLog]).joined(separator: " ")
    }

    func environment(browser options: [String] = [], extra: [String: String] = [:]) -> [String: String] {
        [
            "XDG_CONFIG_HOME": config, "XDG_STATE_HOME": state, "XDG_RUNTIME_DIR": runtime, "BROWSER": browser(options),
            "OIDC_PROFILE": "", "OIDC_STORE": "", "OIDC_BROWSER_HANDOFF": "", "KUBERNETES_EXEC_INFO": "",
        ].merging(extra) { $1 }
    }

    func run(_ arguments: [String], browser options: [String] = [], extra: [String: String] = [:], stdin: String? = nil) async throws -> CommandResult {
        try await OIDCBinary.run(arguments, stdin: stdin, environment: environment(browser: options, extra: extra), timeout: .scaled(.seconds(90)))
    }

    var log: String { (try? String(contentsOfFile: browserLog, encoding: .utf8)) ?? "" }

    func storedLogin(_ profile: String) throws -> StoredLogin? {
        try FileKeychain(directory: URL(fileURLWithPath: store)).load(TokenStoreKey(service: "oidc", account: profile))
    }

    var profileDirectory: String { config + "/oidc/profiles" }

    static func permissions(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    /// Every file under the sandbox, with the permissions of each (for "nothing readable by others").
    func files() -> [(path: String, mode: Int)] {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return walker.compactMap { $0 as? String }.map { root.appendingPathComponent($0).path }.compactMap { path in
            Self.permissions(path).map { (path, $0) }
        }
    }
}
