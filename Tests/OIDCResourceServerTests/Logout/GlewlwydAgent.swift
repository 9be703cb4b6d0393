import OIDCTestSupport

/// `scripts/glewlwyd-agent.py`, the glewlwyd test user's browser (docs/glewlwyd.md), which inherits
/// the `OIDC_GLEWLWYD_*` variables.
enum GlewlwydAgent {
    /// Runs the agent with `arguments` and waits for it to end.
    static func run(_ arguments: [String]) async throws -> TestAgent.Result { try await TestAgent.run("glewlwyd-agent.py", arguments) }
}
