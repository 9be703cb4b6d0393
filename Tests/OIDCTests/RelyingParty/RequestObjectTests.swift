import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Signed request objects (RFC 9101, JAR) behind `RelyingParty.authorizationURL(for:)`, by value and
/// through pushed authorization requests, over real loopback HTTP against TestProvider.
@Suite("Signed request objects", .timeLimit(.scaledMinutes(1)))
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

    @Test("a request-object key given without a kid: the object carries its thumbprint, which a provider that requires a kid (as glewlwyd does) takes")
    func thumbprintKeyID() async throws {
        let pem = try String(contentsOf: JWSSigningKeyTests.fixtures.appendingPathComponent("rsa-pkcs1.pem"), encoding: .utf8)
        let key = try JWSSigningKey(pem: pem, algorithm: .ps256)
        let client = TestProvider.Client.privateKeyJWT(id: "fapi-client", keys: [key], redirectURIs: [Self.redirectURI])
        var configuration = TestProvider.Configuration(clients: [client])
        configuration.requiresKeyID = true
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = key
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let object = try #require(try Self.query(url)["request"])
            #expect(try UnverifiedJWT(object).header["kid"] == .string(try key.thumbprint()))
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.clientID == "fapi-client")
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
        }
    }

    /// A way to break a valid request object's claims or header before it is signed again.
    enum Breakage: String, CaseIterable, Sendable {
        case wrongType, noType, otherIssuer, otherAudience, expired, notYetValid, twoHours, noNotBefore, otherClientID, carriesRequestURI,
            unsigned
    }

    @Test("the provider refuses each broken object with invalid_request_object; the unbroken one is taken, once", arguments: Breakage.allCases)
    func brokenObjects(_ breakage: Breakage) async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let now = Date().timeIntervalSince1970.rounded(.down)
            var claims = try UnverifiedJWT(try request.requestObject(signedWith: key, audience: provider.issuer)).claims
            var type: String? = AuthorizationRequest.requestObjectType
            switch breakage {
            case .wrongType: type = "JWT"
            case .noType: type = nil
            case .otherIssuer: claims["iss"] = "someone-else"
            case .otherAudience: claims["aud"] = "https://other.example"
            case .expired: claims["exp"] = .number(now - 5)
            case .notYetValid: claims["nbf"] = .number(now + 300)
            case .twoHours: claims["exp"] = .number(now + 7200)
            case .noNotBefore: claims["nbf"] = nil
            case .otherClientID: claims["client_id"] = "someone-else"
            case .carriesRequestURI: claims["request_uri"] = "urn:ietf:params:oauth:request_uri:x"
            case .unsigned: break
            }
            var object = try key.sign(claims: claims, type: type)
            if breakage == .unsigned {
                let header = Base64URL.encode(Array(#"{"alg":"none","typ":"oauth-authz-req+jwt"}"#.utf8))
                object = header + "." + object.split(separator: ".")[1] + "."
            }
            let answer = try await rp.transport.send(HTTPRequest(url: try request.url(requestObject: object)), options: HTTPRequestOptions(followRedirects: false))
            #expect(answer.status == 400, "\(breakage): \(answer.status)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("invalid_request_object"), "\(breakage)")

            // The object as the library makes it: taken once, then refused as a replay.
            let good = try request.url(requestObject: try request.requestObject(signedWith: key, audience: provider.issuer))
            #expect(try await rp.transport.send(HTTPRequest(url: good), options: HTTPRequestOptions(followRedirects: false)).status == 302)
            let replay = try await rp.transport.send(HTTPRequest(url: good), options: HTTPRequestOptions(followRedirects: false))
            #expect(replay.status == 400 && String(decoding: replay.body, as: UTF8.self).contains("invalid_request_object"))
        }
    }

    @Test("claims and authorization_details go into the object as JSON, and the login completes; not JSON, or a name the object sets itself, is refused before anything is signed")
    func jsonAndReservedParameters() async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = key
            let details = #"[{"type":"payment_initiation","instructedAmount":{"currency":"EUR","amount":"12.00"}}]"#
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI) { request in
                request.additionalParameters = [
                    OAuthParameter("claims", #"{"id_token":{"acr":{"essential":true}}}"#), OAuthParameter("authorization_details", details),
                ]
            }
            let object = try request.requestObject(signedWith: key, audience: provider.issuer)
            let claims = try UnverifiedJWT(object).claims
            #expect(claims["claims"]?.objectValue?["id_token"] != nil)
            #expect(claims["authorization_details"]?.arrayValue?.count == 1)
            let url = try await rp.authorizationURL(for: request)
            _ = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)

            let broken = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.additionalParameters = [OAuthParameter("claims", "{not json")] }
            let notJSON = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: broken) }
            #expect(notJSON?.code == .invalidArgument && notJSON?.context["parameter"] == "claims")
            for name in ["jti", "exp", "request", "request_uri"] {
                let reserved = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.additionalParameters = [OAuthParameter(name, "x")] }
                let error = await #expect(throws: OIDCError.self, "\(name)") { try await rp.authorizationURL(for: reserved) }
                #expect(error?.code == .reservedParameter, "\(name)")
            }
        }
    }

    @Test("a key of an algorithm the provider does not take for request objects is refused before anything is signed")
    func algorithmNotTaken() async throws {
        let (configuration, client, key) = try Self.setUp(pushed: .required)
        try await withTestProvider(configuration) { provider in
            var discovered = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key)).provider
            #expect(discovered.requestObjectSigningAlgorithms.contains("ES256"))
            discovered.requestObjectSigningAlgorithms = ["PS256"]
            var rp = RelyingParty(provider: discovered, clientID: client.id, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = key
            let error = await #expect(throws: OIDCError.self) {
                try await rp.authorizationURL(for: try rp.authorizationRequest(redirectURI: Self.redirectURI))
            }
            #expect(error?.code == .invalidArgument && error?.message.contains("PS256") == true)
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
        }
    }

    @Test("a provider that requires objects refuses a plain push; discovery's require_signed_request_object is read, merged, and must be a boolean")
    func requiredAtPushAndMetadata() async throws {
        let (configuration, client, key) = try Self.setUp(pushed: .required, objects: .required)
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let error = await #expect(throws: OIDCError.self) { try await rp.tokenClient.pushAuthorizationRequest(request) }
            #expect(error?.providerError?.error == "invalid_request_object", "\(String(describing: error))")
        }
        func document(_ extra: String) -> [UInt8] {
            Array(#"{"issuer":"https://id.example","authorization_endpoint":"https://id.example/a","token_endpoint":"https://id.example/t","jwks_uri":"https://id.example/k","response_types_supported":["code"]\#(extra)}"#.utf8)
        }
        let metadata = try ProviderMetadata(
            document: document(#","require_signed_request_object":true,"request_object_signing_alg_values_supported":["PS256","ES256"]"#), expectedIssuer: "https://id.example")
        #expect(metadata.advertised.requireSignedRequestObject && metadata.advertised.requestObjectSigningAlgValuesSupported == ["PS256", "ES256"])
        let merged = ProviderConfiguration(issuer: "https://id.example", authorizationEndpoint: URL(string: "https://id.example/a")).merging(metadata)
        #expect(merged.requiresSignedRequestObjects && merged.requestObjectSigningAlgorithms == ["PS256", "ES256"])
        #expect(throws: OIDCError.self) { try ProviderMetadata(document: document(#","require_signed_request_object":1"#), expectedIssuer: "https://id.example") }
    }
}
