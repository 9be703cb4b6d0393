import Foundation
import OIDC

/// The MCP server from PyPI that `scripts/mcp-server.sh` starts (docs/interop.md), as its
/// `OIDC_MCP_*` variables describe it; `nil` when they are not set (the tests against it are skipped).
struct MCPTestServer {
    /// The MCP endpoint, which is also the resource its tokens are for.
    let resource: URL
    /// Its authorization server.
    let issuer: URL
    /// The base scope, and the tool that needs `stepUpScope` besides.
    let scope: String
    let stepUpScope: String
    let stepUpTool: String
    /// The secret of the authorization server's `/testing/` routes.
    let controlSecret: String

    static let current: MCPTestServer? = {
        let environment = ProcessInfo.processInfo.environment
        guard let resource = environment["OIDC_MCP_RESOURCE"].flatMap(URL.init(string:)),
            let issuer = environment["OIDC_MCP_ISSUER"].flatMap(URL.init(string:)),
            let scope = environment["OIDC_MCP_SCOPE"], let stepUpScope = environment["OIDC_MCP_STEP_UP_SCOPE"],
            let stepUpTool = environment["OIDC_MCP_STEP_UP_TOOL"],
            let secretFile = environment["OIDC_MCP_CONTROL_SECRET_FILE"],
            let secret = try? String(contentsOfFile: secretFile, encoding: .utf8)
        else { return nil }
        return MCPTestServer(
            resource: resource, issuer: issuer, scope: scope, stepUpScope: stepUpScope, stepUpTool: stepUpTool,
            controlSecret: secret.trimmingCharacters(in: .whitespacesAndNewlines))
    }()

    /// What the authorization server saw (registrations, authorization and token requests; no token).
    struct Log: Decodable {
        struct Registration: Decodable {
            let client_id: String
            let redirect_uris: [String]
            let grant_types: [String]
            let token_endpoint_auth_method: String?
            let application_type: String?
        }
        struct Authorization: Decodable {
            let client_id: String?
            let scopes: [String]?
            let resource: String?
            let redirect_uri: String
        }
        struct TokenRequest: Decodable {
            let grant_type: String?
            let client_id: String?
            let scope: String?
            let resource: [String]?
        }
        let registrations: [Registration]
        let authorizations: [Authorization]
        let token_requests: [TokenRequest]
    }

    func log(_ transport: any HTTPTransport) async throws -> Log {
        let response = try await control("GET", "testing/log", transport)
        return try JSONDecoder().decode(Log.self, from: Data(response.body))
    }

    /// Every access token issued so far stops being active: a client's next call gets a 401.
    func expireAccessTokens(_ transport: any HTTPTransport) async throws {
        _ = try await control("POST", "testing/expire-access-tokens", transport)
    }

    private func control(_ method: String, _ path: String, _ transport: any HTTPTransport) async throws -> HTTPResponse {
        let request = HTTPRequest(
            method: method, url: issuer.appendingPathComponent(path), headers: HTTPHeaders([("Authorization", "Bearer \(controlSecret)")]))
        let response = try await transport.send(request, options: HTTPRequestOptions())
        guard response.status == 200 else { throw OIDCError(.malformedResponse, "\(method) \(path): HTTP \(response.status)") }
        return response
    }
}
