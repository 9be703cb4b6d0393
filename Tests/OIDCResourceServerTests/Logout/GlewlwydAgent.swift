import Foundation
import OIDCTesting

/// `scripts/glewlwyd-agent.py`, the glewlwyd test user's browser (docs/glewlwyd.md), as a
/// subprocess that inherits the `OIDC_GLEWLWYD_*` variables, started with OIDCTesting's
/// `ChildProcess` (posix_spawn) and waited on from a thread of its own, not one of Swift's
/// cooperative pool. Each of its HTTP requests times out after 10 s, so it ends.
enum GlewlwydAgent {
    /// Its exit status (0 done, 1 failed, 3 an error redirect) and what it printed.
    struct Result: Sendable {
        let status: Int32
        /// Standard output.
        let output: String
        /// Standard error: why it failed.
        let errors: String

        /// The first line of the output that starts with `prefix`.
        func line(startingWith prefix: String) -> String? {
            output.split(separator: "\n").map(String.init).first { $0.hasPrefix(prefix) }
        }

        /// The output as one JSON object of strings.
        func json() -> [String: String] {
            (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: String] ?? [:]
        }
    }

    /// The checkout, where `scripts/` is.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Runs the agent with `arguments` and waits for it to end.
    static func run(_ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try runBlocking(arguments) }) }
        }
    }

    private static func runBlocking(_ arguments: [String]) throws -> Result {
        let script = root.appendingPathComponent("scripts/glewlwyd-agent.py").path
        let agent = try ChildProcess("/usr/bin/env", ["python3", script] + arguments)
        var output = ""
        while true {
            let chunk = agent.readOutput()
            if chunk.isEmpty { break }
            output += chunk
        }
        let status: Int32
        switch agent.waitForTermination() {
        case .exited(let code): status = code
        case .signalled(let signal): status = 128 + signal
        }
        return Result(status: status, output: output, errors: agent.standardError)
    }
}
