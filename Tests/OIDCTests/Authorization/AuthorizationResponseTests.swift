import Foundation
import OIDC
import Testing

func callback(_ text: String) throws -> URL { try #require(URL(string: text)) }

@Suite("Authorization response and redirect matching")
struct AuthorizationResponseTests {
    let base = "http://127.0.0.1:8765/callback"

    @Test("a callback with the right state yields the code, redacted")
    func success() throws {
        let request = try genericRequest()
        let response = try AuthorizationResponse(
            callbackURL: callback("\(base)?code=SplxlOBeZQQYbYS6WxSbIA&state=state-1"), request: request
        )
        #expect(response.code.revealedValue == "SplxlOBeZQQYbYS6WxSbIA")
        #expect(response.state == "state-1")
        #expect(response.issuer == nil)
        #expect(!"\(response)".contains("SplxlOBeZQQYbYS6WxSbIA"))
    }

    @Test("a provider error becomes a typed provider error with its description")
    func providerError() throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) {
            try AuthorizationResponse(
                callbackURL: callback("\(base)?error=access_denied&error_description=The+user+said+no&error_uri=https%3A%2F%2Fidp%2Fe&state=state-1"),
                request: request
            )
        }
        #expect(error?.code == .providerError)
        #expect(error?.category == .provider)
        #expect(error?.providerError == .init(error: "access_denied", errorDescription: "The user said no", errorURI: "https://idp/e"))
        #expect(error?.description.contains("The user said no") == true)
    }

    @Test("a state mismatch is rejected before anything else", arguments: [
        "?code=abc&state=other", "?error=access_denied&state=other", "?code=abc&state=state-", "?code=abc&state=state-1x",
        "?code=abc&state=other&iss=https%3A%2F%2Fevil.example",
    ])
    func stateMismatch(query: String) throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) { try AuthorizationResponse(callbackURL: callback(base + query), request: request) }
        #expect(error?.code == .stateMismatch)
        #expect(error?.category == .security)
    }

    @Test("a missing state is rejected", arguments: ["?code=abc", "?error=access_denied", ""])
    func missingState(query: String) throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) { try AuthorizationResponse(callbackURL: callback(base + query), request: request) }
        #expect(error?.code == .stateMissing)
    }

    @Test("a repeated parameter is rejected, not first-one-wins", arguments: [
        "?code=a&code=b&state=state-1", "?code=a&state=state-1&state=state-1", "?code=a&state=state-1&iss=x&iss=y",
    ])
    func duplicates(query: String) throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) { try AuthorizationResponse(callbackURL: callback(base + query), request: request) }
        #expect(error?.code == .duplicateParameter)
        #expect(error?.category == .security)
    }

    @Test("RFC 9207: an iss that is not the expected issuer is rejected, also on error responses", arguments: [
        "?code=a&state=state-1&iss=https%3A%2F%2Fevil.example", "?error=access_denied&state=state-1&iss=https%3A%2F%2Fevil.example",
        "?code=a&state=state-1&iss=https%3A%2F%2Fidp.example%2F",
    ])
    func issuerMismatch(query: String) throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) { try AuthorizationResponse(callbackURL: callback(base + query), request: request) }
        #expect(error?.code == .issuerMismatch)
        #expect(error?.context["expected"] == "https://idp.example")
    }

    @Test("RFC 9207: the right iss passes; a missing one fails only when the provider promised it")
    func issuerPresence() throws {
        var request = try genericRequest()
        let withIss = try AuthorizationResponse(callbackURL: callback("\(base)?code=a&state=state-1&iss=https%3A%2F%2Fidp.example"), request: request)
        #expect(withIss.issuer == "https://idp.example")
        _ = try AuthorizationResponse(callbackURL: callback("\(base)?code=a&state=state-1"), request: request)
        request.requiresIssuerInResponse = true
        let error = #expect(throws: OIDCError.self) {
            try AuthorizationResponse(callbackURL: callback("\(base)?code=a&state=state-1"), request: request)
        }
        #expect(error?.code == .issuerMissing)
    }

    @Test("Schibsted compares the issuer ignoring one trailing slash")
    func schibstedIssuer() throws {
        let request = try AuthorizationRequest.schibsted(
            environment: .pre, clientID: "c", redirectURI: "com.example:/login", state: "s1234567890"
        )
        let response = try AuthorizationResponse(
            callbackURL: callback("com.example:/login?code=a&state=s1234567890&iss=https%3A%2F%2Fidentity-pre.schibsted.com%2F"),
            request: request
        )
        #expect(response.code.revealedValue == "a")
    }

    @Test("a callback without code or error is incomplete")
    func noCode() throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) { try AuthorizationResponse(callbackURL: callback("\(base)?state=state-1"), request: request) }
        #expect(error?.code == .missingParameter)
    }

    @Test("a broken percent-encoding is rejected")
    func brokenEncoding() throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) {
            try AuthorizationResponse(callbackURL: callback("\(base)?code=%FF&state=state-1"), request: request)
        }
        #expect(error?.code == .malformedURL)
    }

    @Test("errors never contain the code")
    func noSecretInErrors() throws {
        let request = try genericRequest()
        let error = #expect(throws: OIDCError.self) {
            try AuthorizationResponse(callbackURL: callback("\(base)?code=SECRETCODE&state=wrong"), request: request)
        }
        #expect(error?.description.contains("SECRETCODE") == false)
    }

    @Test("the matcher tells our redirect, bankId, cancel and foreign URLs apart", arguments: [
        ("com.example.app:/login", "com.example.app:/login?code=a&state=s", RedirectMatcher.Match.authorizationResponse),
        ("com.example.app:/login", "COM.EXAMPLE.APP:/login?code=a", .authorizationResponse),
        ("com.example.app:/login", "com.example.app:/bankId", .ignorable),
        ("com.example.app:/login", "com.example.app:/login/bankId?x=1", .ignorable),
        ("com.example.app:/login", "com.example.app:/cancel", .cancelled),
        ("com.example.app:/login", "com.example.app:/login/cancel", .cancelled),
        ("com.example.app:/login", "com.other.app:/login?code=a", .notOurs),
        ("com.example.app:/login", "com.example.app:/logout", .notOurs),
        ("com.example.app:/login", "com.example.app:/Login", .notOurs),
        ("https://app.example/oauth/callback", "https://app.example/oauth/callback?code=a", .authorizationResponse),
        ("https://app.example/oauth/callback", "https://APP.example:443/oauth/callback?code=a", .authorizationResponse),
        ("https://app.example/oauth/callback", "https://evil.example/oauth/callback?code=a", .notOurs),
        ("https://app.example/oauth/callback", "http://app.example/oauth/callback?code=a", .notOurs),
        ("https://app.example/oauth/callback", "https://app.example:8443/oauth/callback?code=a", .notOurs),
        ("https://app.example/oauth/callback", "https://app.example/bankId", .ignorable),
        ("http://127.0.0.1:8765/callback", "http://127.0.0.1:8766/callback?code=a", .notOurs),
    ])
    func matcher(redirect: String, url: String, expected: RedirectMatcher.Match) throws {
        #expect(try RedirectMatcher(redirectURI: redirect).match(callback(url)) == expected)
    }

    @Test("handleRedirect checks our redirect and passes the others through")
    func handleRedirect() throws {
        var request = try genericRequest()
        request.redirectURI = "com.example.app:/login"
        guard case .authorized(let response) = try request.handleRedirect(callback("com.example.app:/login?code=c1&state=state-1")) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.code.revealedValue == "c1")
        guard case .ignored = try request.handleRedirect(callback("com.example.app:/bankId")) else {
            Issue.record("bankId must be ignored")
            return
        }
        guard case .cancelled = try request.handleRedirect(callback("com.example.app:/cancel")) else {
            Issue.record("cancel must cancel")
            return
        }
        guard case .notOurs = try request.handleRedirect(callback("https://elsewhere.example/x")) else {
            Issue.record("foreign URL must not be ours")
            return
        }
        let error = #expect(throws: OIDCError.self) { try request.handleRedirect(callback("com.example.app:/login?code=c1&state=zzz")) }
        #expect(error?.code == .stateMismatch)
    }
}
