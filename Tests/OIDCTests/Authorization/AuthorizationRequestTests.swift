import Foundation
import OIDC
import Testing

/// Query parameters of a URL, decoded.
func queryParameters(_ url: URL) throws -> [OAuthParameter] {
    let query = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
    return try FormEncoding.decode(query)
}

let rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
let rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

func genericRequest(endpoint: String = "https://idp.example/authorize") throws -> AuthorizationRequest {
    var request = try AuthorizationRequest(
        authorizationEndpoint: try #require(URL(string: endpoint)), clientID: "client 1",
        redirectURI: "http://127.0.0.1:8765/callback", scopes: ["openid", "profile"], issuer: "https://idp.example"
    )
    request.state = "state-1"
    request.nonce = "nonce-1"
    request.pkce = try PKCE(verifier: rfcVerifier)
    return request
}

@Suite("Authorization request")
struct AuthorizationRequestTests {
    @Test("a generic request lists every parameter in the documented order")
    func order() throws {
        var request = try genericRequest()
        request.loginHint = "user@example.com"
        request.maxAge = 300
        request.uiLocales = "sv en"
        request.additionalParameters = [.init("resource", "https://api.example/"), .init("audience", "x")]
        request.acrValues = "urn:mace:incommon:iap:silver"
        request.prompt = "login consent"
        #expect(try request.url().absoluteString == "https://idp.example/authorize?client_id=client%201&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback&response_type=code&scope=openid%20profile&state=state-1&nonce=nonce-1&code_challenge=\(rfcChallenge)&code_challenge_method=S256&login_hint=user%40example.com&max_age=300&ui_locales=sv%20en&resource=https%3A%2F%2Fapi.example%2F&audience=x&acr_values=urn%3Amace%3Aincommon%3Aiap%3Asilver&prompt=login%20consent")
    }

    @Test("values with + & = # / % and non-ASCII round-trip exactly", arguments: [
        "a+b", "a&b=c", "x#y", "/a/b?c", "100%", "%41", "Världen", "日本語 ✓", "  spaced  ", "'\"<>", "a\tb",
    ])
    func roundTrip(value: String) throws {
        var request = try genericRequest()
        request.loginHint = value
        request.additionalParameters = [.init("extra", value), .init(value, "name")]
        let url = try request.url()
        #expect(!url.absoluteString.contains("+"), "a space is %20 and a plus %2B in a URL")
        let decoded = try queryParameters(url)
        #expect(decoded["login_hint"] == value)
        #expect(decoded["extra"] == value)
        #expect(decoded[value] == "name")
        #expect(decoded["state"] == "state-1")
    }

    @Test("the endpoint's own query items are kept in front")
    func existingQuery() throws {
        let url = try genericRequest(endpoint: "https://idp.example/authorize?tenant=a%20b&p=1").url()
        #expect(url.absoluteString.hasPrefix("https://idp.example/authorize?tenant=a%20b&p=1&client_id=client%201&"))
        let empty = try genericRequest(endpoint: "https://idp.example/authorize?").url()
        #expect(empty.absoluteString.hasPrefix("https://idp.example/authorize?client_id="))
    }

    @Test("an endpoint query that already sets one of our parameters is refused")
    func endpointCollision() throws {
        let error = #expect(throws: OIDCError.self) { try genericRequest(endpoint: "https://idp.example/a?state=x").url() }
        #expect(error?.code == .duplicateParameter)
    }

    @Test("additional parameters cannot override ours or repeat")
    func additionalParameterRules() throws {
        var request = try genericRequest()
        request.additionalParameters = [.init("code_challenge_method", "plain")]
        #expect((#expect(throws: OIDCError.self) { try request.url() })?.code == .reservedParameter)
        request.additionalParameters = [.init("a", "1"), .init("a", "2")]
        #expect((#expect(throws: OIDCError.self) { try request.url() })?.code == .duplicateParameter)
    }

    @Test("endpoints must be https except on loopback", arguments: [
        ("https://idp.example/a", true), ("http://127.0.0.1:9000/a", true), ("http://[::1]:9000/a", true),
        ("http://localhost/a", true), ("http://127.1.2.3/a", true), ("http://idp.example/a", false),
        ("http://127.0.0.1.evil.example/a", false), ("ftp://idp.example/a", false), ("https://idp.example/a#f", false),
    ])
    func endpointPolicy(endpoint: String, allowed: Bool) throws {
        let request = try genericRequest(endpoint: endpoint)
        if allowed {
            _ = try request.url()
        } else {
            #expect(throws: OIDCError.self) { try request.url() }
        }
    }

    @Test("scopes are deduplicated in order and validated")
    func scopes() throws {
        var request = try genericRequest()
        request.scopes = ["openid", "email", "openid", "profile", "email"]
        #expect(try queryParameters(request.url())["scope"] == "openid email profile")
        for bad in ["two words", "", "quo\"te", "back\\slash", "é"] {
            request.scopes = ["openid", bad]
            #expect((#expect(throws: OIDCError.self) { try request.url() })?.code == .invalidArgument)
        }
    }

    @Test("empty optional values are omitted; nonce and PKCE can be left out on purpose")
    func omissions() throws {
        var request = try genericRequest()
        request.loginHint = ""
        request.prompt = ""
        request.nonce = nil
        request.pkce = nil
        let names = try queryParameters(request.url()).map(\.name)
        #expect(names == ["client_id", "redirect_uri", "response_type", "scope", "state"])
    }

    @Test("bad redirect URIs are refused", arguments: ["relative/path", "http://evil.example/cb", "https://app.example/cb#frag", "", "http:/cb", "https:///cb"])
    func redirectURIs(uri: String) throws {
        var request = try genericRequest()
        request.redirectURI = uri
        #expect(throws: OIDCError.self) { try request.url() }
    }

    @Test("app schemes, claimed https links and loopback redirects are accepted", arguments: [
        "com.example.app:/callback", "com.example.app://callback", "https://app.example/oauth", "http://[::1]:1234/callback",
    ])
    func goodRedirectURIs(uri: String) throws {
        var request = try genericRequest()
        request.redirectURI = uri
        #expect(try queryParameters(request.url())["redirect_uri"] == uri)
    }

    @Test("fresh requests get distinct random state, nonce and verifier")
    func randomDefaults() throws {
        let endpoint = try #require(URL(string: "https://idp.example/a"))
        let a = try AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "c", redirectURI: "http://127.0.0.1/cb")
        let b = try AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "c", redirectURI: "http://127.0.0.1/cb")
        #expect(a.state != b.state)
        #expect(a.nonce != b.nonce)
        #expect(a.pkce != b.pkce)
        #expect(a.state.count >= 22)  // at least 128 bits
        #expect(try queryParameters(a.url())["code_challenge_method"] == "S256")
    }

    @Test("empty client id, state or nonce and a negative max_age are refused")
    func emptyValues() throws {
        var request = try genericRequest()
        request.clientID = ""
        #expect(throws: OIDCError.self) { try request.url() }
        request = try genericRequest()
        request.state = ""
        #expect(throws: OIDCError.self) { try request.url() }
        request = try genericRequest()
        request.nonce = ""
        #expect(throws: OIDCError.self) { try request.url() }
        request = try genericRequest()
        request.maxAge = -1
        #expect(throws: OIDCError.self) { try request.url() }
    }
}
