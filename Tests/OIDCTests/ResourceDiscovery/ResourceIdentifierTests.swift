import Foundation
import OIDC
import Testing

/// Resource identifiers (RFC 8707 §2, RFC 9728 §3.1) and the 401 challenge's hint.
@Suite("Resource identifiers and challenges")
struct ResourceIdentifierTests {
    @Test("scheme and host are lowercased; the path, a trailing slash and the query stay as written")
    func normalization() throws {
        #expect(try ResourceIdentifier(parsing: "HTTPS://MCP.Example.COM/Path/").value == "https://mcp.example.com/Path/")
        #expect(try ResourceIdentifier(parsing: "https://mcp.example.com/mcp").value == "https://mcp.example.com/mcp")
        #expect(try ResourceIdentifier(parsing: "https://mcp.example.com").value == "https://mcp.example.com")
        #expect(try ResourceIdentifier(parsing: "https://mcp.example.com:8443/a?b=c").value == "https://mcp.example.com:8443/a?b=c")
        #expect(try ResourceIdentifier(parsing: "http://127.0.0.1:8000/mcp").origin == "http://127.0.0.1:8000")
    }

    @Test("a fragment, user information, another scheme or plain http off loopback are refused, naming the rule")
    func refusals() {
        for (text, code) in [
            ("https://api.example/x#frag", OIDCError.Code.invalidArgument), ("https://user@api.example/x", .invalidArgument),
            ("ftp://api.example/x", .invalidArgument), ("/relative", .invalidArgument), ("http://api.example/x", .insecureEndpoint),
        ] {
            let error = #expect(throws: OIDCError.self) { try ResourceIdentifier(parsing: text) }
            #expect(error?.code == code)
            #expect(error?.context["rule"] != nil)
        }
    }

    @Test("metadata is looked for with the path inserted, then at the root; a root resource has one location")
    func metadataLocations() throws {
        #expect(try ResourceIdentifier(parsing: "https://api.example/v1/mcp").metadataURLs.map(\.absoluteString) == [
            "https://api.example/.well-known/oauth-protected-resource/v1/mcp", "https://api.example/.well-known/oauth-protected-resource",
        ])
        #expect(try ResourceIdentifier(parsing: "https://api.example/").metadataURLs.map(\.absoluteString) == [
            "https://api.example/.well-known/oauth-protected-resource",
        ])
        #expect(try ResourceIdentifier(parsing: "https://api.example/a?x=1").metadataURLs.first?.absoluteString
            == "https://api.example/.well-known/oauth-protected-resource/a?x=1")
    }

    @Test("the Bearer challenge is found after another scheme's, in any field; its resource_metadata, scope and error")
    func challenge() {
        var headers = HTTPHeaders()
        headers.add("WWW-Authenticate", #"Negotiate, Basic realm="x""#)
        headers.add("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="read admin", resource_metadata="https://a.example/m""#)
        let challenge = ResourceChallenge(HTTPResponse(status: 401, headers: headers))
        #expect(challenge == ResourceChallenge(resourceMetadata: "https://a.example/m", scopes: ["read", "admin"], error: "insufficient_scope"))
        var none = HTTPHeaders()
        none.add("WWW-Authenticate", "Negotiate")
        #expect(ResourceChallenge(HTTPResponse(status: 401, headers: none)) == nil)
        // The error on a challenge that is not the first (RFC 9449 §7.1: one per scheme, any order),
        // in one field and in two: error and scope are that challenge's; the metadata the first named.
        for fields in [
            [#"DPoP algs="ES256", resource_metadata="https://a.example/m", Bearer error="insufficient_scope", scope="admin""#],
            [#"DPoP algs="ES256", resource_metadata="https://a.example/m""#, #"Bearer error="insufficient_scope", scope="admin", resource_metadata="https://a.example/m""#],
        ] {
            var headers = HTTPHeaders()
            for field in fields { headers.add("WWW-Authenticate", field) }
            #expect(ResourceChallenge(HTTPResponse(status: 403, headers: headers))
                == ResourceChallenge(resourceMetadata: "https://a.example/m", scopes: ["admin"], error: "insufficient_scope"), "\(fields)")
        }
        var scoped = HTTPHeaders()
        scoped.add("WWW-Authenticate", #"DPoP algs="ES256", Bearer scope="read write""#)
        #expect(ResourceChallenge(HTTPResponse(status: 401, headers: scoped)) == ResourceChallenge(scopes: ["read", "write"]))
        var huge = HTTPHeaders()
        huge.add("WWW-Authenticate", "Bearer scope=\"" + String(repeating: "a ", count: 100_000) + "\"")
        #expect(ResourceChallenge(HTTPResponse(status: 401, headers: huge)) != nil)
    }
}
