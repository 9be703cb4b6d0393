import OIDC
@testable import MCPClient
import Testing

@Suite("InsufficientScopeChallenge")
struct InsufficientScopeChallengeTests {
    static func response(_ status: Int, _ fields: String...) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders(fields.map { ("WWW-Authenticate", $0) }))
    }

    @Test("the MCP Python SDK's 403, wherever the Bearer challenge sits")
    func parses() {
        let python = #"Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="http://127.0.0.1:9420/.well-known/oauth-protected-resource/mcp", error_description="the tool needs mcp:tools mcp:admin""#
        #expect(InsufficientScopeChallenge(Self.response(403, python))?.scopes == ["mcp:tools", "mcp:admin"])
        #expect(InsufficientScopeChallenge(Self.response(403, #"Negotiate, Basic realm="x", "# + python))?.scopes == ["mcp:tools", "mcp:admin"])
        #expect(InsufficientScopeChallenge(Self.response(403, "Basic realm=x", #"DPoP algs="ES256", error="insufficient_scope", scope="a\"b c""#))?.scopes == [#"a"b"#, "c"])
    }

    @Test("not a step-up: another status, another error, another scheme, no challenge")
    func refuses() {
        #expect(InsufficientScopeChallenge(Self.response(401, #"Bearer error="insufficient_scope", scope="a""#)) == nil)
        #expect(InsufficientScopeChallenge(Self.response(403, #"Bearer error="invalid_token""#)) == nil)
        #expect(InsufficientScopeChallenge(Self.response(403, #"Basic error="insufficient_scope", scope="a""#)) == nil)
        #expect(InsufficientScopeChallenge(Self.response(403)) == nil)
        #expect(InsufficientScopeChallenge(Self.response(403, #"Bearer error="insufficient_scope", scope=""# + String(repeating: "a", count: 9000))) == nil)
        #expect(InsufficientScopeChallenge(Self.response(403, #"Bearer error="insufficient_scope", scope="unterminated"#))?.scopes == ["unterminated"])
    }

    @Test("the step-up asks for what was granted and what is asked, each once, in that order")
    func union() {
        let challenge = InsufficientScopeChallenge(Self.response(403, #"Bearer error="insufficient_scope", scope="mcp:tools mcp:admin""#))
        #expect(challenge?.scopes(adding: ["mcp:tools", "openid"]) == ["mcp:tools", "openid", "mcp:admin"])
    }
}
