import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// The built `oidc` against a real MCP server: the official MCP Python SDK's (PyPI `mcp`, streamable
/// HTTP, JSON answers) protected by its own plain OAuth authorization server (RFC 8414, RFC 7591,
/// RFC 8707 `resource` required everywhere, exact loopback redirect ports), started by
/// `scripts/mcp-server.sh start` and named by the `OIDC_MCP_*` variables it prints. The issue's
/// acceptance, in order on one server: a login from the resource's URL alone through a
/// registration, a JSON-RPC `initialize` through `oidc request`, a tool that needs more scope
/// (exit 4, then the printed step-up login, then it works), refreshes that carry `resource`, and a
/// second profile that reuses the registration.
@Suite(
    "oidc against the MCP Python SDK's server", .timeLimit(.scaledMinutes(3)),
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_MCP_RESOURCE"] != nil, "set OIDC_MCP_* (scripts/mcp-server.sh start prints them)")
)
struct MCPCLIInteropTests {
    static let environment = ProcessInfo.processInfo.environment

    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_MCP_" + name], "OIDC_MCP_\(name) is not set: export what scripts/mcp-server.sh start prints")
    }

    /// The authorization server's test log (registrations, authorizations, token requests; no tokens).
    static func serverLog() async throws -> [String: Any] {
        let secret = try String(contentsOfFile: try variable("CONTROL_SECRET_FILE"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let url = try #require(URL(string: try variable("ISSUER") + "/testing/log"))
        let response = try await withNIOHTTPTransport { transport in
            try await transport.send(HTTPRequest(url: url, headers: ["Authorization": "Bearer \(secret)"]))
        }
        #expect(response.status == 200)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func entries(_ log: [String: Any], _ name: String) -> [[String: Any]] { log[name] as? [[String: Any]] ?? [] }

    static let initialize =
        #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"oidc-tests","version":"1"}}}"#

    /// `oidc request` arguments for one JSON-RPC message to the MCP endpoint.
    static func call(_ body: String, session: String?, profile: String = "mcp", include: Bool = false) throws -> [String] {
        var arguments = ["request", try variable("RESOURCE"), "--profile", profile, "-X", "POST", "-H", "Content-Type: application/json",
                         "-H", "Accept: application/json, text/event-stream", "-d", body]
        if let session { arguments += ["-H", "mcp-session-id: \(session)", "-H", "mcp-protocol-version: 2025-06-18"] }
        if include { arguments.append("--include") }
        return arguments
    }

    /// A new MCP session: `initialize` (its answer checked), then `notifications/initialized`; the session id.
    static func openSession(_ sandbox: LoginSandbox) async throws -> String {
        let initialized = try await sandbox.run(try call(initialize, session: nil, include: true))
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(initialized.stdout.contains(#""serverInfo""#) && initialized.stdout.contains(#""id":1"#), "\(initialized.stdout)")
        let line = try #require(initialized.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("mcp-session-id:") })
        let session = String(line.drop { $0 != ":" }.dropFirst()).trimmingCharacters(in: .whitespaces)
        let notified = try await sandbox.run(try call(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, session: session))
        #expect(notified.status == 0, "\(notified.stderr)")
        return session
    }

    @Test("login --resource with no issuer and no client id, initialize, step-up on a tool, refreshes with resource, a second profile on the same registration")
    func acceptance() async throws {
        let resource = try Self.variable("RESOURCE"), stepUpScope = try Self.variable("STEP_UP_SCOPE"), tool = try Self.variable("STEP_UP_TOOL")
        let sandbox = LoginSandbox()
        let before = Self.entries(try await Self.serverLog(), "registrations").count

        let login = try await sandbox.run(["login", "--resource", resource, "--profile", "mcp"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("a plain OAuth server"), "\(login.stderr)")
        var log = try await Self.serverLog()
        let registrations = Self.entries(log, "registrations")
        #expect(registrations.count == before + 1)
        let registration = try #require(registrations.last)
        #expect(registration["application_type"] as? String == "native" && registration["token_endpoint_auth_method"] as? String == "none", "\(registration)")
        #expect(Set(registration["grant_types"] as? [String] ?? []) == ["authorization_code", "refresh_token"], "\(registration)")
        #expect(Self.entries(log, "authorizations").last?["resource"] as? String == resource)
        let stored = try #require(try sandbox.storedLogin("mcp"))
        #expect(stored.resource == resource && stored.clientID == registration["client_id"] as? String)

        let session = try await Self.openSession(sandbox)
        let call = #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"\#(tool)","arguments":{}}}"#
        let refused = try await sandbox.run(try Self.call(call, session: session))
        #expect(refused.status == 4, "\(refused.stderr)")
        let line = try #require(refused.stderr.split(separator: "\n").first { $0.contains("oidc: error:") }, "\(refused.stderr)")
        #expect(line.contains(stepUpScope), "\(line)")
        let command = try #require(line.range(of: "oidc login --profile mcp --scope '").map { String(line[$0.lowerBound...]) }, "\(line)")
        var environment = sandbox.environment()
        environment["PATH"] = OIDCBinary.url.deletingLastPathComponent().path + ":" + (Self.environment["PATH"] ?? "/usr/bin:/bin")
        let stepUp = try await CLIReferenceTests.shell(command, environment: environment)
        #expect(stepUp.status == 0, "\(stepUp.stderr)")
        log = try await Self.serverLog()
        #expect((Self.entries(log, "authorizations").last?["scopes"] as? [String] ?? []).contains(stepUpScope), "\(Self.entries(log, "authorizations").last ?? [:])")
        #expect(Self.entries(log, "registrations").count == before + 1)
        let granted = try await sandbox.run(try Self.call(call, session: try await Self.openSession(sandbox)))
        #expect(granted.status == 0, "\(granted.stderr)")
        #expect(granted.stdout.contains(#""result""#), "\(granted.stdout)")

        let forced = try await sandbox.run(["token", "--profile", "mcp", "--force-refresh"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let refresh = try #require(Self.entries(try await Self.serverLog(), "token_requests").last)
        #expect(refresh["grant_type"] as? String == "refresh_token" && refresh["resource"] as? [String] == [resource], "\(refresh)")

        // The server forgets every access token: the next call's 401 refreshes once, with resource, and succeeds.
        let secret = try String(contentsOfFile: try Self.variable("CONTROL_SECRET_FILE"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let expire = try #require(URL(string: try Self.variable("ISSUER") + "/testing/expire-access-tokens"))
        let expired = try await withNIOHTTPTransport { transport in
            try await transport.send(HTTPRequest(method: "POST", url: expire, headers: ["Authorization": "Bearer \(secret)"]))
        }
        #expect(expired.status == 200)
        let refreshesBefore = Self.entries(try await Self.serverLog(), "token_requests").filter { $0["grant_type"] as? String == "refresh_token" }.count
        _ = try await Self.openSession(sandbox)
        let refreshes = Self.entries(try await Self.serverLog(), "token_requests").filter { $0["grant_type"] as? String == "refresh_token" }
        #expect(refreshes.count == refreshesBefore + 1)
        #expect(refreshes.last?["resource"] as? [String] == [resource], "\(refreshes.last ?? [:])")

        let second = try await sandbox.run(["login", "--resource", resource, "--profile", "second"])
        #expect(second.status == 0, "\(second.stderr)")
        log = try await Self.serverLog()
        #expect(Self.entries(log, "registrations").count == before + 1)
        #expect(try sandbox.storedLogin("second")?.clientID == registration["client_id"] as? String)
        _ = try await Self.openSession(sandbox)
    }
}
