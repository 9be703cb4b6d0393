import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Mutual TLS (RFC 8705) against TestProvider over loopback https: `tls_client_auth` and
/// `self_signed_tls_client_auth`, certificate-bound access tokens, the mTLS endpoint aliases.
@Suite("Mutual TLS", .timeLimit(.scaledMinutes(2)))
struct MutualTLSTests {
    static let redirectURI = "http://127.0.0.1:9/callback"
    /// One certificate authority and its certificates for the whole run (openssl, at test time).
    static let certificates = Task { try await TestCertificates.make() }

    static func configuration(_ certificates: TestCertificates, clients: [TestProvider.Client]) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: clients, tls: certificates.serverTLS)
        configuration.mutualTLS = TestProvider.MutualTLS(clientCertificateAuthoritiesPEM: [certificates.authority.certificatePEM])
        return configuration
    }

    /// A transport that trusts the test authority and presents `identity`'s certificate, if any.
    static func transportConfiguration(_ certificates: TestCertificates, presenting identity: TestCertificates.Identity?) -> NIOHTTPTransport.Configuration {
        NIOHTTPTransport.Configuration(
            trustsSystemRoots: false, additionalTrustRootsPEM: [certificates.authority.certificatePEM],
            clientCertificate: identity.map { TLSClientCertificate(chainPEM: $0.certificatePEM, privateKeyPEM: Secret($0.keyPEM)) }
        )
    }

    /// The introspection answer's `cnf.x5t#S256`.
    static func boundThumbprint(_ token: Secret, _ rp: RelyingParty) async throws -> String? {
        let answer = try await rp.tokenClient.introspect(token)
        #expect(answer.active)
        return answer.raw["cnf"]?.objectValue?["x5t#S256"]?.stringValue
    }

    @Test("tls_client_auth: a browser login through the mtls aliases; the token is bound to the certificate; the session's request is taken with it, refused without it and with another")
    func tlsClientAuthLogin() async throws {
        let certificates = try await Self.certificates.value
        let client = TestProvider.Client.tlsClientAuth(id: "bank-app", subjectDN: certificates.client.subjectDN)
        try await withTestProvider(Self.configuration(certificates, clients: [client])) { provider in
            try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: certificates.client)) { transport in
                let rp = try await provider.relyingParty(client: client, transport: transport)
                #expect(rp.usesMutualTLS && rp.sendsCertificateBoundTokens && rp.authenticatesWithMutualTLS)
                #expect(rp.provider.tlsClientCertificateBoundAccessTokens)
                #expect(rp.provider.tokenEndpoint?.absoluteString == provider.issuer + "/mtls/token")
                #expect(rp.provider.userinfoEndpoint?.absoluteString == provider.issuer + "/mtls/userinfo")
                #expect(rp.provider.revocationEndpoint?.absoluteString == provider.issuer + "/mtls/revoke")
                #expect(rp.provider.introspectionEndpoint?.absoluteString == provider.issuer + "/mtls/introspect")
                #expect(rp.provider.authorizationEndpoint?.absoluteString == provider.authorizationEndpoint)

                let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
                let url = try await rp.authorizationURL(for: request)
                let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, transport), for: request)
                #expect(await provider.mutualTLSRequestCount(.token) == 1)
                #expect(await provider.requestParameters(.token).first?["client_id"] == "bank-app")
                #expect(await provider.requestParameters(.token).first?["client_secret"] == nil)
                #expect(try await Self.boundThumbprint(login.tokens.accessToken, rp) == certificates.client.thumbprint)

                let store = InMemoryTokenStore()
                let key = TokenStoreKey(service: "mtls", account: "bank-app")
                let session = try await rp.keep(login, in: store, as: key, allowlist: .default(for: provider.protectedResource))
                let answer = try await session.send(HTTPRequest(url: provider.protectedResource))
                #expect(answer.status == 200)

                // The same token over a connection without the certificate, or with another one: refused.
                for identity in [nil, certificates.otherClient] {
                    try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: identity)) { other in
                        var headers = HTTPHeaders()
                        headers.add("Authorization", "Bearer " + login.tokens.accessToken.revealedValue)
                        let refused = try await other.send(HTTPRequest(url: provider.protectedResource, headers: headers))
                        #expect(refused.status == 401)
                        #expect(String(decoding: refused.body, as: UTF8.self).contains("bound to a client certificate"))
                    }
                }
                // Userinfo through its alias, over the certificate.
                let claims = try await rp.tokenClient.userinfo(accessToken: login.tokens.accessToken, expectedSubject: login.idToken.claims.subject)
                #expect(claims["sub"]?.stringValue == login.idToken.claims.subject)
                #expect(await provider.mutualTLSRequestCount(.userinfo) == 1)
            }
        }
    }

    @Test("self_signed_tls_client_auth: client credentials and a refresh-free service session, the token bound to the self-signed certificate")
    func selfSignedClientCredentials() async throws {
        let certificates = try await Self.certificates.value
        let client = TestProvider.Client.selfSignedTLSClientAuth(id: "nightly", certificatesPEM: [certificates.selfSigned.certificatePEM])
        try await withTestProvider(Self.configuration(certificates, clients: [client])) { provider in
            try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: certificates.selfSigned)) { transport in
                let rp = try await provider.relyingParty(client: client, transport: transport)
                #expect(rp.tokenClient.authentication.method == .selfSignedTLSClientAuth)
                let tokens = try await rp.tokenClient.clientCredentials(scopes: ["reports"])
                #expect(try await Self.boundThumbprint(tokens.accessToken, rp) == certificates.selfSigned.thumbprint)
                #expect(await provider.mutualTLSRequestCount(.token) == 1)
                #expect(await provider.mutualTLSRequestCount(.introspection) == 1)

                let session = rp.serviceSession(scopes: ["reports"], allowlist: .default(for: provider.protectedResource))
                #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            }
        }
    }

    @Test("a certificate that is not the client's is refused with invalid_client: another subject, another authority's, another self-signed one, none at all")
    func wrongCertificates() async throws {
        let certificates = try await Self.certificates.value
        let issued = TestProvider.Client.tlsClientAuth(id: "issued", subjectDN: certificates.client.subjectDN)
        let selfSigned = TestProvider.Client.selfSignedTLSClientAuth(id: "self", certificatesPEM: [certificates.selfSigned.certificatePEM])
        let cases: [(TestProvider.Client, TestCertificates.Identity?)] = [
            (issued, certificates.otherClient), (issued, certificates.selfSigned), (selfSigned, certificates.otherSelfSigned),
            (selfSigned, certificates.client),
        ]
        try await withTestProvider(Self.configuration(certificates, clients: [issued, selfSigned])) { provider in
            for (client, identity) in cases {
                try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: identity)) { transport in
                    let rp = try await provider.relyingParty(client: client, transport: transport)
                    let error = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials() }
                    #expect(error?.code == .providerError && error?.providerError?.error == "invalid_client", "\(client.id) \(identity?.subjectDN ?? "none")")
                }
            }
            // Without a certificate the client library refuses before anything is sent.
            let before = await provider.requestCount(.token)
            try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: nil)) { transport in
                let rp = try await provider.relyingParty(client: issued, transport: transport)
                #expect(!rp.sendsCertificateBoundTokens && rp.usesMutualTLS)
                let error = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials() }
                #expect(error?.code == .invalidArgument && error?.message.contains("presents no TLS client certificate") == true)
            }
            #expect(await provider.requestCount(.token) == before)
        }
    }

    @Test("a public client without a certificate uses the ordinary endpoints; with one, the aliases and a bound token")
    func aliasesOnlyForMutualTLS() async throws {
        let certificates = try await Self.certificates.value
        try await withTestProvider(Self.configuration(certificates, clients: [.default])) { provider in
            try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: nil)) { transport in
                let rp = try await provider.relyingParty(transport: transport)
                #expect(!rp.usesMutualTLS && !rp.sendsCertificateBoundTokens && !rp.authenticatesWithMutualTLS)
                #expect(rp.provider.tokenEndpoint?.absoluteString == provider.tokenEndpoint)
                #expect(rp.provider.mutualTLSEndpointAliases.tokenEndpoint?.absoluteString == provider.issuer + "/mtls/token")
            }
            try await withNIOHTTPTransport(configuration: Self.transportConfiguration(certificates, presenting: certificates.selfSigned)) { transport in
                let rp = try await provider.relyingParty(transport: transport)
                #expect(rp.usesMutualTLS && rp.sendsCertificateBoundTokens && !rp.authenticatesWithMutualTLS)
                let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
                let url = try await rp.authorizationURL(for: request)
                let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, transport), for: request)
                #expect(await provider.mutualTLSRequestCount(.token) == 1)
                var headers = HTTPHeaders()
                headers.add("Authorization", "Bearer " + login.tokens.accessToken.revealedValue)
                #expect(try await transport.send(HTTPRequest(url: provider.protectedResource, headers: headers)).status == 200)
            }
        }
    }
}
