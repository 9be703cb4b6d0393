import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// More of the FAPI 2.0 profile's rules against TestProvider over loopback: the client's own key
/// algorithms, the assertion audience, PKCE taken out of a request, the provider's ID-token
/// algorithms, signed responses (JARM), the device flow, and mutual TLS as the sender constraint.
/// Each refusal comes before the request the rule forbids is sent.
@Suite("FAPI 2.0 profile: more rules", .timeLimit(.scaledMinutes(2)))
struct FAPI2ProfileRulesTests {
    static let redirectURI = FAPI2ProfileTests.redirectURI

    static func fapiRelyingParty(_ provider: TestProvider, _ client: TestProvider.Client, _ key: JWSSigningKey) async throws -> RelyingParty {
        var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
        rp.securityProfile = .fapi2
        rp.dpop = .on
        return rp
    }

    static func expectRule(_ error: OIDCError?, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .profileViolation, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.context["rule"]?.contains(fragment) == true, "\(String(describing: error?.context))", sourceLocation: sourceLocation)
    }

    /// Which of the client's own keys signs RS256.
    enum RS256Key: String, CaseIterable, CustomTestStringConvertible {
        case dpop, clientAssertion, requestObject
        var testDescription: String { rawValue }
    }

    @Test("a client key signing RS256 is refused (PS256, ES256, EdDSA only), nothing sent", arguments: RS256Key.allCases)
    func refusesRS256ClientKeys(_ which: RS256Key) async throws {
        let (configuration, client, key) = try FAPI2ProfileTests.setUp()
        try await withTestProvider(configuration) { provider in
            var rp = try await Self.fapiRelyingParty(provider, client, key)
            switch which {
            case .dpop: rp.dpop = .newKeyPerLogin(.rs256)
            case .clientAssertion: rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(try JWSSigningKey.generate(.rs256)))
            case .requestObject: rp.requestObjectKey = try JWSSigningKey.generate(.rs256)
            }
            if which == .clientAssertion {
                rp.securityProfile = .fapi2
                rp.dpop = .on
            }
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            Self.expectRule(error, "cryptography")
            #expect(error?.message.contains("RS256") == true)
            await FAPI2ProfileTests.expectNothingSent(provider)
        }
    }

    @Test("client assertions addressed to each endpoint are refused: FAPI 2.0 addresses them to the issuer")
    func refusesEndpointAudience() async throws {
        let (configuration, client, key) = try FAPI2ProfileTests.setUp()
        try await withTestProvider(configuration) { provider in
            var authentication = ClientAuthentication.privateKeyJWT(key)
            authentication.assertionAudience = .endpoint
            var rp = try await provider.relyingParty(client: client, authentication: authentication)
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            Self.expectRule(error, "client assertion audience")
            await FAPI2ProfileTests.expectNothingSent(provider)
        }
    }

    @Test("a request whose PKCE a configure closure took out is refused by authorizationURL, nothing pushed")
    func refusesRequestWithoutPKCE() async throws {
        let (configuration, client, key) = try FAPI2ProfileTests.setUp()
        try await withTestProvider(configuration) { provider in
            let rp = try await Self.fapiRelyingParty(provider, client, key)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI) { $0.pkce = nil }
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            Self.expectRule(error, "PKCE")
            await FAPI2ProfileTests.expectNothingSent(provider)
        }
    }

    @Test("a provider that signs ID tokens only with RS256 (id_token_signing_alg_values_supported) is refused before anything is sent")
    func refusesProviderIDTokenAlgorithms() async throws {
        let (configuration, client, key) = try FAPI2ProfileTests.setUp()
        try await withTestProvider(configuration) { provider in
            let discovered = try await Self.fapiRelyingParty(provider, client, key)
            #expect(discovered.provider.idTokenSigningAlgorithms.contains("ES256"))
            var onlyRS256 = discovered.provider
            onlyRS256.idTokenSigningAlgorithms = ["RS256"]
            var rp = RelyingParty(provider: onlyRS256, clientID: client.id, authentication: .privateKeyJWT(key))
            rp.securityProfile = .fapi2
            rp.dpop = .on
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            Self.expectRule(error, "cryptography")
            #expect(error?.message.contains("id_token_signing_alg_values_supported") == true)
            await FAPI2ProfileTests.expectNothingSent(provider)
            rp.securityProfile = .none
            _ = try rp.authorizationRequest(redirectURI: Self.redirectURI)
        }
    }

    @Test("signed responses (JARM) under the profile: a provider that signs them only RS256 is refused before anything is sent; one that also names ES256 but signs RS256 is refused before the code is exchanged; ES256 is taken")
    func jarmAlgorithms() async throws {
        let (configuration, client, key) = try FAPI2ProfileTests.setUp { $0.idTokenAlgorithm = .rs256 }
        try await withTestProvider(configuration) { provider in
            var rp = try await Self.fapiRelyingParty(provider, client, key)
            rp.responseMode = .jwt
            #expect(rp.provider.authorizationSigningAlgorithms == ["RS256"])
            let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            Self.expectRule(error, "cryptography")
            #expect(error?.message.contains("JARM") == true)
            await FAPI2ProfileTests.expectNothingSent(provider)

            // A provider that names ES256 too, and signs this response RS256 all the same.
            var named = rp.provider
            named.authorizationSigningAlgorithms = ["RS256", "ES256"]
            var both = RelyingParty(provider: named, clientID: client.id, authentication: .privateKeyJWT(key))
            both.securityProfile = .fapi2
            both.dpop = .on
            both.responseMode = .jwt
            let request = try both.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await both.authorizationURL(for: request)
            let callback = try await RelyingPartyTests.callback(for: url, both.transport)
            let refused = await #expect(throws: OIDCError.self) { try await both.completeLogin(callback: callback, for: request) }
            #expect(refused?.code == .algorithmNotAllowed, "\(String(describing: refused))")
            #expect(await provider.requestCount(.token) == 0)
        }
        let (es256, esClient, esKey) = try FAPI2ProfileTests.setUp()
        try await withTestProvider(es256) { provider in
            var rp = try await Self.fapiRelyingParty(provider, esClient, esKey)
            rp.responseMode = .jwt
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.tokens.tokenType == "DPoP")
        }
    }

    @Test("the device flow is refused under the profile, nothing sent")
    func refusesDeviceFlow() async throws {
        let (configuration, client, key) = try FAPI2ProfileTests.setUp()
        try await withTestProvider(configuration) { provider in
            let rp = try await Self.fapiRelyingParty(provider, client, key)
            let error = await #expect(throws: OIDCError.self) { try await rp.deviceLogin() }
            Self.expectRule(error, "authorization code flow")
            #expect(await provider.requestCount(.deviceAuthorization) == 0)
        }
    }

    @Test("mutual TLS as the sender constraint: a compliant tls_client_auth login without DPoP; refused when the provider does not bind its tokens to the certificate")
    func mutualTLSSenderConstraint() async throws {
        let certificates = try await MutualTLSTests.certificates.value
        let client = TestProvider.Client.tlsClientAuth(id: "bank-app", subjectDN: certificates.client.subjectDN, redirectURIs: [Self.redirectURI])
        for binds in [true, false] {
            var configuration = MutualTLSTests.configuration(certificates, clients: [client])
            configuration.mutualTLS?.bindsAccessTokens = binds
            configuration.idTokenAlgorithm = .es256
            configuration.pushedAuthorizationRequests = .offered
            try await withTestProvider(configuration) { provider in
                try await withNIOHTTPTransport(configuration: MutualTLSTests.transportConfiguration(certificates, presenting: certificates.client)) { transport in
                    var rp = try await provider.relyingParty(client: client, transport: transport)
                    rp.securityProfile = .fapi2
                    #expect(rp.provider.tlsClientCertificateBoundAccessTokens == binds)
                    guard binds else {
                        let error = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
                        Self.expectRule(error, "sender-constrained")
                        #expect(error?.message.contains("tls_client_certificate_bound_access_tokens") == true)
                        await FAPI2ProfileTests.expectNothingSent(provider)
                        return
                    }
                    let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
                    let url = try await rp.authorizationURL(for: request)
                    #expect(Set(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) ?? []) == ["client_id", "request_uri"])
                    let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, transport), for: request)
                    #expect(try await MutualTLSTests.boundThumbprint(login.tokens.accessToken, rp) == certificates.client.thumbprint)
                }
            }
        }
    }
}
