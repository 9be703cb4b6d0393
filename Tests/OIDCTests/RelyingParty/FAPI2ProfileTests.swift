import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `RelyingParty.securityProfile = .fapi2` against TestProvider over loopback: a compliant login,
/// and each refusal, with nothing sent that the rule forbids.
@Suite("FAPI 2.0 profile", .timeLimit(.scaledMinutes(1)))
struct FAPI2ProfileTests {
    static let redirectURI = "http://127.0.0.1:9/callback"

    /// A FAPI-shaped provider: ES256 ID tokens, PAR offered, DPoP accepted, a private_key_jwt client.
    static func setUp(_ adjust: (inout TestProvider.Configuration) -> Void = { _ in }) throws -> (TestProvider.Configuration, TestProvider.Client, JWSSigningKey) {
        let key = try JWSSigningKey.generate(.es256, keyID: "fapi-1")
        let client = TestProvider.Client.privateKeyJWT(id: "fapi-client", keys: [key], redirectURIs: [redirectURI])
        var configuration = TestProvider.Configuration(clients: [client, .confidential(id: "secret-client", secret: "s3cret-value-0123456789", redirectURIs: [redirectURI])])
        configuration.idTokenAlgorithm = .es256
        adjust(&configuration)
        return (configuration, client, key)
    }

    static func expectNothingSent(_ provider: TestProvider) async {
        #expect(await provider.requestCount(.pushedAuthorization) == 0)
        #expect(await provider.requestCount(.authorize) == 0)
        #expect(await provider.requestCount(.token) == 0)
    }

    @Test("a compliant login: pushed by itself, the browser's URL carries only client_id and request_uri, iss required, a DPoP-bound token, ES256 ID token")
    func compliantLogin() async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            rp.dpop = .on
            #expect(rp.pushesAuthorizationRequests)
            try rp.checkSecurityProfile()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            #expect(request.requiresIssuerInResponse)
            let url = try await rp.authorizationURL(for: request)
            let names = Set(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) ?? [])
            #expect(names == ["client_id", "request_uri"])
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.tokens.tokenType == "DPoP")
            #expect(login.idToken.algorithm == .es256)
            #expect(await provider.requestCount(.pushedAuthorization) == 1)
        }
    }

    @Test("refused before anything is sent: bearer tokens (no DPoP, no client certificate)")
    func refusesBearerTokens() async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            #expect(error?.code == .profileViolation)
            #expect(error?.category == .configuration)
            #expect(error?.context["rule"]?.contains("sender-constrained") == true, "\(String(describing: error))")
            #expect(error?.message.contains("RelyingParty.dpop = .on") == true)
            await Self.expectNothingSent(provider)
        }
    }

    @Test("refused before anything is sent: a client secret")
    func refusesSharedSecret() async throws {
        let (configuration, _, _) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: configuration.clients[1])
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            #expect(error?.code == .profileViolation)
            #expect(error?.context["rule"]?.contains("client authentication") == true, "\(String(describing: error))")
            #expect(error?.message.contains("s3cret") == false)
            await Self.expectNothingSent(provider)
        }
    }

    @Test("refused before anything is sent: a provider without pushed authorization requests")
    func refusesWithoutPAR() async throws {
        let (configuration, client, key) = try Self.setUp { $0.pushedAuthorizationRequests = .notOffered }
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            #expect(error?.code == .profileViolation)
            #expect(error?.context["rule"]?.contains("pushed authorization requests") == true, "\(String(describing: error))")
            await Self.expectNothingSent(provider)
        }
    }

    @Test("a request made without the profile's requirements is refused by authorizationURL, nothing pushed")
    func refusesForeignRequest() async throws {
        let (configuration, client, key) = try Self.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.dpop = .on
            rp.securityProfile = .fapi2
            // The iss requirement turned off by the caller's own settings.
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.requiresIssuerInResponse = false }
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .profileViolation)
            await Self.expectNothingSent(provider)
        }
    }

    @Test("a request URI living 600 s or more is refused: the browser never gets it")
    func refusesLongLivedRequestURI() async throws {
        let (configuration, client, key) = try Self.setUp { $0.pushedRequestLifetime = 600 }
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .profileViolation)
            #expect(error?.context["expires_in"] == "600")
            #expect(await provider.requestCount(.authorize) == 0)
        }
    }

    @Test("a callback without iss is refused, nothing exchanged")
    func refusesMissingIss() async throws {
        let (configuration, client, key) = try Self.setUp { $0.issuerParameterSupported = false }
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let callback = try await RelyingPartyTests.callback(for: url, rp.transport)
            #expect(!callback.absoluteString.contains("iss="))
            let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: callback, for: request) }
            #expect(error?.code == .issuerMissing)
            #expect(await provider.requestCount(.token) == 0)
        }
    }

    @Test("an RS256 ID token is refused under the profile (PS256, ES256 or EdDSA only), and taken without it")
    func refusesRS256IDToken() async throws {
        let (configuration, client, key) = try Self.setUp { $0.idTokenAlgorithm = .rs256 }
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let error = await #expect(throws: OIDCError.self) {
                try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            }
            #expect(error?.code == .algorithmNotAllowed, "\(String(describing: error))")

            rp.securityProfile = .none
            let plain = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: plain), rp.transport), for: plain)
            #expect(login.idToken.algorithm == .rs256)
        }
    }
}
