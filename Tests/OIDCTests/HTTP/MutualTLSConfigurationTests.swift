import Foundation
import OIDC
import OIDCTesting
import Testing

/// What mutual TLS takes before anything is sent: the client certificate and key, their files, and
/// the provider's `mtls_endpoint_aliases` (RFC 8705 §5).
@Suite("Mutual TLS configuration")
struct MutualTLSConfigurationTests {
    static func metadata(_ extra: String) -> [UInt8] {
        Array(
            """
            {"issuer":"https://login.example.com","jwks_uri":"https://login.example.com/jwks","response_types_supported":["code"],
             "token_endpoint":"https://login.example.com/token","userinfo_endpoint":"https://login.example.com/userinfo"\(extra)}
            """.utf8)
    }

    @Test("mtls_endpoint_aliases and tls_client_certificate_bound_access_tokens are read; the configuration uses the aliases only when asked")
    func aliasesRead() throws {
        let metadata = try ProviderMetadata(
            document: Self.metadata(
                #","tls_client_certificate_bound_access_tokens":true,"mtls_endpoint_aliases":{"token_endpoint":"https://mtls.example.com/token","par_unknown":"x"}"#
            ), expectedIssuer: "https://login.example.com")
        #expect(metadata.advertised.tlsClientCertificateBoundAccessTokens)
        #expect(metadata.advertised.mutualTLSEndpointAliases.tokenEndpoint?.absoluteString == "https://mtls.example.com/token")
        let configuration = try metadata.configuration()
        #expect(configuration.tokenEndpoint?.absoluteString == "https://login.example.com/token")
        let aliased = configuration.usingMutualTLSEndpointAliases()
        #expect(aliased.tokenEndpoint?.absoluteString == "https://mtls.example.com/token")
        #expect(aliased.userinfoEndpoint?.absoluteString == "https://login.example.com/userinfo")
        #expect(aliased.usingMutualTLSEndpointAliases() == aliased)

        let merged = ProviderConfiguration(issuer: "https://login.example.com", authorizationEndpoint: nil).merging(metadata)
        #expect(merged.mutualTLSEndpointAliases == metadata.advertised.mutualTLSEndpointAliases && merged.tlsClientCertificateBoundAccessTokens)
        let plain = try ProviderMetadata(document: Self.metadata(""), expectedIssuer: "https://login.example.com")
        #expect(plain.advertised.mutualTLSEndpointAliases.isEmpty && !plain.advertised.tlsClientCertificateBoundAccessTokens)
    }

    @Test("aliases are held to the endpoint policy and must be an object of strings", arguments: [
        (#","mtls_endpoint_aliases":{"token_endpoint":"http://mtls.example.com/token"}"#, OIDCError.Code.insecureEndpoint),
        (#","mtls_endpoint_aliases":["https://mtls.example.com/token"]"#, .malformedResponse),
        (#","mtls_endpoint_aliases":{"token_endpoint":7}"#, .malformedResponse),
        (#","tls_client_certificate_bound_access_tokens":"yes""#, .malformedResponse),
    ])
    func aliasesRefused(member: String, code: OIDCError.Code) {
        let error = #expect(throws: OIDCError.self) { try ProviderMetadata(document: Self.metadata(member), expectedIssuer: "https://login.example.com") }
        #expect(error?.code == code)
    }

    @Test("a TokenClient with tls_client_auth uses the aliases; a secret-less description")
    func tokenClientAliases() {
        var provider = ProviderConfiguration(issuer: "https://login.example.com", authorizationEndpoint: nil, tokenEndpoint: URL(string: "https://login.example.com/token"))
        provider.mutualTLSEndpointAliases.tokenEndpoint = URL(string: "https://mtls.example.com/token")
        let mutual = TokenClient(provider: provider, clientID: "c", authentication: .tlsClientAuth, transport: NIOHTTPTransport.shared)
        #expect(mutual.usesMutualTLS && mutual.provider.tokenEndpoint?.host == "mtls.example.com")
        #expect(mutual.provider.clientAuthentication == .tlsClientAuth)
        let plain = TokenClient(provider: provider, clientID: "c", authentication: .none, transport: NIOHTTPTransport.shared)
        #expect(!plain.usesMutualTLS && plain.provider.tokenEndpoint?.host == "login.example.com")
        #expect(ClientAuthentication.tlsClientAuth.description == "tls_client_auth")
        #expect(ClientAuthentication.selfSignedTLSClientAuth.description == "self_signed_tls_client_auth")
        #expect(ClientAuthenticationMethod.selfSignedTLSClientAuth.isMutualTLS && !ClientAuthenticationMethod.privateKeyJWT.isMutualTLS)
    }

    @Test("bad PEM: a certificate or key that is not PEM, or a key of another certificate, is invalidArgument saying what to give, without key material")
    func badPEM() async throws {
        let certificates = try await MutualTLSTests.certificates.value
        let good = TLSClientCertificate(chainPEM: certificates.client.certificatePEM, privateKeyPEM: Secret(certificates.client.keyPEM))
        try NIOHTTPTransport.Configuration(clientCertificate: good).validate()
        let cases: [(TLSClientCertificate, String)] = [
            (TLSClientCertificate(chainPEM: "not a certificate", privateKeyPEM: Secret(certificates.client.keyPEM)), "not a PEM certificate chain"),
            (TLSClientCertificate(chainPEM: certificates.client.certificatePEM, privateKeyPEM: Secret("-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n")), "not an unencrypted PEM private key"),
            (TLSClientCertificate(chainPEM: certificates.client.certificatePEM, privateKeyPEM: Secret(certificates.otherClient.keyPEM)), "do not go together"),
        ]
        for (certificate, says) in cases {
            let error = #expect(throws: OIDCError.self) { try NIOHTTPTransport.Configuration(clientCertificate: certificate).validate() }
            #expect(error?.code == .invalidArgument && error?.message.contains(says) == true, "\(error?.message ?? "")")
            #expect(error?.description.contains("PRIVATE KEY-----\nM") == false)
            // A transport made with it refuses every request with the same error, before connecting.
            let transport = NIOHTTPTransport(configuration: .init(clientCertificate: certificate))
            let sent = await #expect(throws: OIDCError.self) { try await transport.send(HTTPRequest(url: URL(string: "https://127.0.0.1:1/")!)) }
            #expect(sent?.code == .invalidArgument)
            try await transport.shutdown()
        }
        #expect(!good.description.contains("BEGIN") && good.description.contains("redacted"))
    }

    @Test("key files are read as secrets: a key others can read is refused, naming chmod 600; a missing or non-PEM file is invalidArgument")
    func keyFiles() async throws {
        let certificates = try await MutualTLSTests.certificates.value
        let loaded = try TLSClientCertificate(chainFile: certificates.client.certificateFile, keyFile: certificates.client.keyFile)
        #expect(loaded.chainPEM == certificates.client.certificatePEM)
        let readable = certificates.directory + "/readable-\(UUID().uuidString).key"
        try FileManager.default.copyItem(atPath: certificates.client.keyFile, toPath: readable)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: readable)
        defer { try? FileManager.default.removeItem(atPath: readable) }
        let refused = #expect(throws: OIDCError.self) { try TLSClientCertificate(chainFile: certificates.client.certificateFile, keyFile: readable) }
        #expect(refused?.code == .storageFailure && refused?.message.contains("chmod 600") == true)

        let missing = #expect(throws: OIDCError.self) { try TLSClientCertificate(chainFile: certificates.client.certificateFile, keyFile: readable + ".none") }
        #expect(missing?.code == .invalidArgument)
        let notPEM = #expect(throws: OIDCError.self) { try TLSClientCertificate(chainFile: certificates.client.keyFile, keyFile: certificates.client.keyFile) }
        #expect(notPEM?.code == .invalidArgument && notPEM?.message.contains("no PEM certificate") == true)
    }
}
