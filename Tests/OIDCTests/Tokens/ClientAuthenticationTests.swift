import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// JWT client authentication (RFC 7523, OIDC Core §9) against TestProvider over loopback HTTP: the
/// provider verifies each assertion with the client's registered key, its audience, its expiry, and
/// refuses a jti it has seen.
@Suite("Client authentication with assertions", .timeLimit(.scaledMinutes(1)))
struct ClientAuthenticationTests {
    static let redirectURI = "http://127.0.0.1:9/callback"

    /// A code flow through `rp`, then a refresh: both authenticate the client.
    static func logInAndRefresh(_ rp: RelyingParty) async throws -> VerifiedLogin {
        let request = try rp.authorizationRequest(redirectURI: redirectURI)
        let answer = try await rp.transport.send(HTTPRequest(url: try await rp.authorizationURL(for: request)), options: HTTPRequestOptions(followRedirects: false))
        let callback = try #require(answer.headers["Location"].flatMap(URL.init(string:)))
        let login = try await rp.completeLogin(callback: callback, for: request)
        _ = try await rp.tokenClient.refresh(try #require(login.tokens.refreshToken))
        return login
    }

    /// The claims and header of the assertion of the provider's latest token request.
    static func lastAssertion(_ provider: TestProvider) async throws -> UnverifiedJWT {
        let parameters = try #require(await provider.tokenRequestParameters().last)
        #expect(parameters["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        #expect(parameters["client_secret"] == nil)
        return try UnverifiedJWT(try #require(parameters["client_assertion"]))
    }

    @Test("private_key_jwt with RS256, PS256, ES256 and EdDSA keys: iss = sub = the client, aud the issuer, a 256-bit jti, 60 s", arguments: [
        JWSAlgorithm.rs256, .ps256, .es256, .edDSA,
    ])
    func privateKeyJWT(algorithm: JWSAlgorithm) async throws {
        let key = try JWSSigningKey.generate(algorithm, keyID: "daemon-key")
        let client = TestProvider.Client.privateKeyJWT(id: "daemon", jwks: JSONValue.object(["keys": .array([.object(key.publicJWK)])]).jsonText)
        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            #expect(rp.provider.clientAuthentication == .privateKeyJWT)
            _ = try await Self.logInAndRefresh(rp)
            #expect(await provider.grantCount("refresh_token") == 1)
            let assertion = try await Self.lastAssertion(provider)
            #expect(assertion.header["alg"] == .string(algorithm.rawValue) && assertion.header["kid"] == "daemon-key")
            #expect(assertion.claims["iss"] == "daemon" && assertion.claims["sub"] == "daemon")
            #expect(assertion.claims["aud"] == .string(provider.issuer))
            #expect((assertion.claims["jti"]?.stringValue?.count ?? 0) >= 43)
            let issuedAt = try #require(assertion.claims["iat"]?.numberValue), expiry = try #require(assertion.claims["exp"]?.numberValue)
            #expect(expiry - issuedAt == 60)
            #expect(abs(issuedAt - Date().timeIntervalSince1970) < 30)
        }
    }

    @Test("a refusal with no body (403, as glewlwyd sends) names the likely cause: the assertion's audience, and how to change it; nobody logged out")
    func bareRefusalNamesTheAudience() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "daemon-key")
        let client = TestProvider.Client.privateKeyJWT(id: "daemon", keys: [key])
        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            await provider.failNextTokenRequests(1, with: .emptyBody(status: 403))
            let refused = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials() }
            #expect(refused?.code == .providerError && refused?.category == .provider && refused?.endsLogin == false)
            #expect(refused?.message.contains("refused the client (HTTP 403") == true, "\(String(describing: refused))")
            #expect(refused?.message.contains("assertionAudience .endpoint") == true)
            var endpoint = ClientAuthentication.privateKeyJWT(key)
            endpoint.assertionAudience = .endpoint
            let other = try await provider.relyingParty(client: client, authentication: endpoint)
            await provider.failNextTokenRequests(1, with: .emptyBody(status: 401))
            let again = await #expect(throws: OIDCError.self) { try await other.tokenClient.clientCredentials() }
            #expect(again?.message.contains("FAPI 2.0 servers want the issuer") == true, "\(String(describing: again))")
        }
    }

    @Test("client_secret_jwt (HS256): the provider checks the HMAC with the client's secret; a wrong secret is invalid_client")
    func clientSecretJWT() async throws {
        let client = TestProvider.Client.confidential(id: "server", secret: "s3cret-of-the-server-32-bytes-long", authentication: .clientSecretJWT)
        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            let rp = try await provider.relyingParty(client: client)
            #expect(rp.provider.clientAuthentication == .clientSecretJWT)
            _ = try await Self.logInAndRefresh(rp)
            #expect(try await Self.lastAssertion(provider).header["alg"] == "HS256")

            let wrong = try await provider.relyingParty(client: client, authentication: .clientSecretJWT(Secret("not-the-secret-but-as-long-as-it")))
            let error = await #expect(throws: OIDCError.self) { try await Self.logInAndRefresh(wrong) }
            #expect(error?.providerError?.error == "invalid_client")
            #expect(error?.description.contains("not-the-secret") == false)

            // RFC 7518 §3.2: an HMAC key shorter than the hash is refused before anything is sent.
            let sent = await provider.requestCount(.token)
            let short = try await provider.relyingParty(client: client, authentication: .clientSecretJWT(Secret("short")))
            let tooShort = await #expect(throws: OIDCError.self) { try await short.tokenClient.refresh(Secret("rt")) }
            #expect(tooShort?.code == .invalidArgument && tooShort?.message.contains("32 bytes") == true)
            #expect(await provider.requestCount(.token) == sent)
        }
    }

    @Test("the assertion's audience: the issuer by default, the endpoint's URL when asked; a provider that takes one refuses the other")
    func audience() async throws {
        let key = try JWSSigningKey.generate(.es256)
        let client = TestProvider.Client.privateKeyJWT(id: "daemon", jwks: JSONValue.object(["keys": .array([.object(key.publicJWK)])]).jsonText)
        var endpointOnly = TestProvider.Configuration(clients: [client])
        endpointOnly.assertionAudience = .endpoint
        try await withTestProvider(endpointOnly) { provider in
            let issuerAudience = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            let refused = await #expect(throws: OIDCError.self) { try await Self.logInAndRefresh(issuerAudience) }
            #expect(refused?.providerError?.error == "invalid_client")

            var authentication = ClientAuthentication.privateKeyJWT(key)
            authentication.assertionAudience = .endpoint
            let rp = try await provider.relyingParty(client: client, authentication: authentication)
            _ = try await Self.logInAndRefresh(rp)
            #expect(try await Self.lastAssertion(provider).claims["aud"] == .string(provider.tokenEndpoint))
        }
        var issuerOnly = TestProvider.Configuration(clients: [client])
        issuerOnly.assertionAudience = .issuer
        try await withTestProvider(issuerOnly) { provider in
            _ = try await Self.logInAndRefresh(try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key)))
        }
    }

    @Test("an assertion is good for one request: the same one again is refused as a replay")
    func replay() async throws {
        let key = try JWSSigningKey.generate(.es256)
        let client = TestProvider.Client.privateKeyJWT(id: "daemon", jwks: JSONValue.object(["keys": .array([.object(key.publicJWK)])]).jsonText)
        try await withTestProvider(TestProvider.Configuration(clients: [client])) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            let login = try await Self.logInAndRefresh(rp)
            let sent = try #require(await provider.tokenRequestParameters().last)
            // The recorded refresh request, sent again byte for byte (its refresh token is spent too,
            // but the assertion is checked first).
            let replayed = try await rp.transport.send(
                HTTPRequest(
                    method: "POST", url: try #require(URL(string: provider.tokenEndpoint)),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Array(FormEncoding.encode(sent.sorted { $0.key < $1.key }.map { OAuthParameter($0.key, $0.value) }).utf8)
                )
            )
            #expect(replayed.status == 401)
            #expect(String(decoding: replayed.body, as: UTF8.self).contains("used before"))
            #expect(login.clientID == "daemon")
        }
    }

    @Test("a method without its secret or key is refused before anything is sent")
    func missingCredentials() async throws {
        try await withTestProvider { provider in
            for authentication in [ClientAuthentication(method: .privateKeyJWT, secret: nil), ClientAuthentication(method: .clientSecretJWT, secret: nil)] {
                let client = TokenClient(provider: provider.providerConfiguration, clientID: "test-client", authentication: authentication, transport: NIOHTTPTransport.shared)
                let error = await #expect(throws: OIDCError.self) { try await client.refresh(Secret("rt")) }
                #expect(error?.code == .invalidArgument, "\(authentication)")
            }
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("a key given without a kid signs with its RFC 7638 thumbprint as kid, which a provider that looks keys up by kid (as glewlwyd does) finds; an unknown kid is refused with what to check")
    func thumbprintKeyID() async throws {
        let pem = try String(contentsOf: JWSSigningKeyTests.fixtures.appendingPathComponent("ec-p256-sec1.pem"), encoding: .utf8)
        let key = try JWSSigningKey(pem: pem)
        #expect(key.keyID == (try key.thumbprint()))
        let client = TestProvider.Client.privateKeyJWT(id: "daemon", keys: [key])
        var configuration = TestProvider.Configuration(clients: [client])
        configuration.requiresKeyID = true
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            _ = try await rp.tokenClient.clientCredentials()
            let assertion = try await Self.lastAssertion(provider)
            #expect(assertion.header["kid"] == .string(try key.thumbprint()))

            // The same key under a kid the provider did not register: invalid_client, and the
            // error says which kid was sent and what else to check.
            let renamed = try JWSSigningKey(pem: pem, keyID: "not-registered")
            let other = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(renamed))
            let refused = await #expect(throws: OIDCError.self) { try await other.tokenClient.clientCredentials() }
            #expect(refused?.providerError?.error == "invalid_client", "\(String(describing: refused))")
            #expect(refused?.context["clientAssertion"] == "private_key_jwt" && refused?.context["kid"] == "not-registered")
            #expect(refused?.context["assertionAudience"] == "issuer")
            #expect(refused?.message.contains("now 'not-registered'") == true, "\(String(describing: refused))")
            #expect(refused?.message.contains("assertionAudience .endpoint") == true)
        }
    }
}
