import OIDC
@testable import MCPClient
import Testing

@Suite("OIDCAuthorizer.stepUpScopes")
struct StepUpScopesTests {
    static func response(_ status: Int, _ fields: String...) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders(fields.map { ("WWW-Authenticate", $0) }))
    }

    @Test("the MCP Python SDK's 403: the scopes granted, then those asked for, each once")
    func union() {
        let python = #"Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="http://127.0.0.1:9420/.well-known/oauth-protected-resource/mcp", error_description="the tool needs mcp:tools mcp:admin""#
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(403, python), granted: ["mcp:tools"]) == ["mcp:tools", "mcp:admin"])
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(403, "Negotiate", python), granted: ["openid", "mcp:tools"]) == ["openid", "mcp:tools", "mcp:admin"])
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(403, #"DPoP algs="ES256", error="insufficient_scope", scope="a""#), granted: []) == ["a"])
    }

    @Test("no step-up: a 401, another error, no Bearer or DPoP challenge")
    func refuses() {
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(401, #"Bearer error="insufficient_scope", scope="a""#), granted: []) == nil)
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(403, #"Bearer error="invalid_token""#), granted: []) == nil)
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(403, #"Basic realm="x""#), granted: []) == nil)
        #expect(OIDCAuthorizer.stepUpScopes(Self.response(403), granted: ["a"]) == nil)
    }
}
