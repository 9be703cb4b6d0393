import Foundation
import OIDC
import OIDCTesting
import Testing

/// Signed request objects (RFC 9101, JAR) behind `RelyingParty.authorizationURL(for:)`, by value and
/// through pushed authorization requests, over real loopback HTTP against TestProvider.
@Suite("Signed request objects", .timeLimit(.minutes(1)))
struct RequestObjectTests {
    static let redirectURI = "http://127.0.0.1:9/callback"

    static func setUp(
        pushed: TestProvider.PushedAuthorizationRequests = .offered, objects: TestProvider.SignedRequestObjects = .accepted
    ) throws -> (TestProvider.Configuration, TestProvider.Client, JWSSigningKey) {
        let key = try JWSSigningKey.generate(.es256, keyID: "request-key")
        let client = TestProvider.Client.privateKeyJWT(id: "fapi-client", keys: [key], redirectURIs: [redirectURI])
        var configuration = TestProvider.Configuration(clients: [client])
        configuration.pushedAuthorizationRequests = pushed
        configuration.signedRequestObjects = objects
        return (configuration, client, key)
    }

    static func query(_ url: URL) throws -> [String: String] {
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        return Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
    }

    @Test("the object: typ oauth-authz-req+jwt, the key's kid, every parameter as a claim (max_age a number), iss the client, aud the issuer, exp 60 s after iat and nbf, a fresh jti")
    func objectClaims() throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "k1")
        var request = try AuthorizationRequest(
            authorizationEndpoint: URL(string: "https://id.example/authorize")!, clientID: "c", redirectURI: "https://app.example/cb",
            scopes: ["openid", "profile"], issuer: "https://id.example")
        request.maxAge = 300
        request.loginHint = "alice"
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let object = try request.requestObject(signedWith: key, audience: "https://id.example", now: now)
        let jwt = try UnverifiedJWT(object)
        #expect(jwt.header["typ"]?.stringValue == "oauth-authz-req+jwt" && jwt.header["kid"]?.stringValue == "k1" && jwt.header["alg"]?.stringValue == "ES256")
        let claims = jwt.claims
        #expect(claims["iss"]?.stringValue == "c" && claims["aud"]?.stringValue == "https://id.example" && claims["client_id"]?.stringValue == "c")
        #expect(claims["iat"]?.numberValue == 1_800_000_000 && claims["nbf"]?.numberValue == 1_800_000_000 && claims["exp"]?.numberValue == 1_800_000_060)
        #expect(claims["max_age"]?.numberValue == 300 && claims["login_hint"]?.stringValue == "alice")
        #expect(claims["state"]?.stringValue == request.state && claims["nonce"]?.stringValue == request.nonce)
        #expect(claims["code_challenge"]?.stringValue == request.pkce?.challenge && claims["scope"]?.stringValue == "openid profile")
        #expect(claims["code_verifier"] == nil)
        let again = try UnverifiedJWT(try request.requestObject(signedWith: key, audience: "https://id.example", now: now))
        #expect(again.claims["jti"]?.stringValue != claims["jti"]?.stringValue)
        let url = try request.url(requestObject: object)
        #expect(Set(try Self.query(url).keys) == ["client_id", "request"])
    }

    @Test("by value: the URL carries only client_id and request; the provider checks the signature and takes the parameters from the object; the login completes")
    func byValue() async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = key
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.loginHint = "alice" }
            let url = try await rp.authorizationURL(for: request)
            #expect(Set(try Self.query(url).keys) == ["client_id", "request"])
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.idToken.claims.nonce == request.nonce)
        }
    }

    @Test("through PAR: the push carries the object as request (and the client's assertion), the URL only client_id and request_uri; the login completes")
    func pushed() async throws {
        let (configuration, client, key) = try Self.setUp(pushed: .required)
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = key
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            #expect(Set(try Self.query(url).keys) == ["client_id", "request_uri"])
            let pushed = try #require(await provider.requestParameters(.pushedAuthorization).first)
            #expect(pushed["request"] != nil && pushed["client_assertion"] != nil && pushed["state"] == nil && pushed["nonce"] == nil)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.clientID == "fapi-client")
        }
    }

    @Test("a provider that requires signed request objects: refused before anything is sent without a key; a plain URL gets an error page")
    func requiredWithoutKey() async throws {
        let (configuration, client, key) = try Self.setUp(objects: .required)
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            #expect(rp.provider.requiresSignedRequestObjects)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            await provider.resetCounters()
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .invalidArgument && error?.message.contains("requestObjectKey") == true)
            #expect(await provider.requestCount(.authorize) == 0)
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
            let plain = try await rp.transport.send(HTTPRequest(url: try request.url()), options: HTTPRequestOptions(followRedirects: false))
            #expect(plain.status == 400 && String(decoding: plain.body, as: UTF8.self).contains("invalid_request_object"))
        }
    }

    @Test("an object the provider must refuse: signed by a key it does not know, or with a parameter changed after signing, gets invalid_request_object")
    func refusedObjects() async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = try JWSSigningKey.generate(.es256, keyID: "request-key")  // not the registered one
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let unknown = try await rp.transport.send(HTTPRequest(url: url), options: HTTPRequestOptions(followRedirects: false))
            #expect(unknown.status == 400 && String(decoding: unknown.body, as: UTF8.self).contains("invalid_request_object"))

            // The registered key, then the payload changed: the signature no longer holds.
            let object = try request.requestObject(signedWith: key, audience: provider.issuer)
            let parts = object.split(separator: ".").map(String.init)
            var claims = try UnverifiedJWT(object).claims
            claims["redirect_uri"] = .string("http://127.0.0.1:9/elsewhere")
            let forged = parts[0] + "." + Base64URL.encode(Array(JSONValue.object(claims).jsonText.utf8)) + "." + parts[2]
            let tampered = try await rp.transport.send(
                HTTPRequest(url: try request.url(requestObject: forged)), options: HTTPRequestOptions(followRedirects: false))
            #expect(tampered.status == 400 && String(decoding: tampered.body, as: UTF8.self).contains("invalid_request_object"))
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }
}
