public import Foundation
import OIDCTesting

/// A Python script of `scripts/` that plays a peer's test user in a browser (`glewlwyd-agent.py`,
/// `dot-agent.py`: docs/glewlwyd.md, docs/interop.md), run as a subprocess that inherits the test's
/// environment (the peer's `OIDC_*` variables). Started with OIDCTesting's `ChildProcess`
/// (posix_spawn, not Foundation's `Process`, whose `run()` on Linux can crash a test process with
/// many descriptors open) and waited on from a thread of its own, not one of Swift's cooperative
/// pool. Each of the scripts' HTTP requests times out after 10 s, so they end.
public enum TestAgent {
    /// How the script ended and what it printed.
    public struct Result: Sendable {
        /// Its exit status (the scripts: 0 done, 1 failed, 3 an error redirect); 128 + N for signal N.
        public let status: Int32
        /// Standard output.
        public let standardOutput: String
        /// Standard error: why it failed.
        public let errors: String

        /// Standard output, then standard error after a newline when there is any: for messages.
        public var output: String { standardOutput + (errors.isEmpty ? "" : "\n" + errors) }

        /// The first line of standard output that starts with `prefix`.
        public func line(startingWith prefix: String) -> String? {
            standardOutput.split(separator: "\n").map(String.init).first { $0.hasPrefix(prefix) }
        }

        /// Standard output as one JSON object of strings (empty when it is not one).
        public func json() -> [String: String] {
            (try? JSONSerialization.jsonObject(with: Data(standardOutput.utf8))) as? [String: String] ?? [:]
        }
    }

    /// The checkout, where `scripts/` is.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `scripts/<script>` with `arguments` under `python3` and waits for it to end.
    public static func run(_ script: String, _ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try runBlocking(script, arguments) }) }
        }
    }

    private static func runBlocking(_ script: String, _ arguments: [String]) throws -> Result {
        let path = root.appendingPathComponent("scripts").appendingPathComponent(script).path
        let agent = try ChildProcess("/usr/bin/env", ["python3", path] + arguments)
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
        return Result(status: status, standardOutput: output, errors: agent.standardError)
    }
}
