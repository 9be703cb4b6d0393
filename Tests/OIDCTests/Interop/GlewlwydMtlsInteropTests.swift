import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Mutual TLS (RFC 8705) against glewlwyd 2.7.5 in its HTTPS mode (`scripts/glewlwyd.sh start --tls`,
/// docs/glewlwyd.md "mTLS"): the `swift-mtls` client authenticates with `tls_client_auth` through
/// the `mtls_endpoint_aliases`, and its access tokens carry `cnf.x5t#S256` of its certificate.
///
/// The variables are those `start --tls` prints (`OIDC_GLEWLWYD_*`, an https issuer), or the same
/// renamed `OIDC_GLEWLWYD_TLS_*`, as `make test-package` exports them beside the HTTP instance's.
@Suite(
    "Interop with glewlwyd: mTLS", .timeLimit(.scaledMinutes(2)),
    .enabled(if: GlewlwydTLSVariables.prefix != nil, "set OIDC_GLEWLWYD_TLS_* or OIDC_GLEWLWYD_MTLS_* (scripts/glewlwyd.sh start --tls prints them)")
)
struct GlewlwydMtlsInteropTests {
    static func variable(_ name: String) throws -> String {
        let prefix = try #require(GlewlwydTLSVariables.prefix)
        return try #require(
            GlewlwydTLSVariables.environment[prefix + name], "\(prefix)\(name) is not set: export what scripts/glewlwyd.sh start --tls prints")
    }

    static func text(ofFile name: String) throws -> String {
        try String(contentsOfFile: try variable(name), encoding: .utf8)
    }

    /// A transport that trusts glewlwyd's test CA and, with `certificate`, presents the `swift-mtls`
    /// client's certificate.
    static func configuration(certificate: Bool = true) throws -> NIOHTTPTransport.Configuration {
        NIOHTTPTransport.Configuration(
            trustsSystemRoots: false, additionalTrustRootsPEM: [try text(ofFile: "CA_FILE")],
            clientCertificate: certificate
                ? try TLSClientCertificate(chainFile: try variable("MTLS_CLIENT_CERT_FILE"), keyFile: try variable("MTLS_CLIENT_KEY_FILE")) : nil
        )
    }

    /// The `x5t#S256` of the client's certificate.
    static func thumbprint() throws -> String {
        try ClientCertificateCheck.thumbprint(der: try TestCertificates.der(try text(ofFile: "MTLS_CLIENT_CERT_FILE")))
    }

    /// `cnf.x5t#S256` of a JWT access token (glewlwyd's are JWTs), read without verification.
    static func boundThumbprint(_ token: Secret) throws -> String? {
        try UnverifiedJWT(token.revealedValue).claims["cnf"]?.objectValue?["x5t#S256"]?.stringValue
    }

    @Test("client credentials with tls_client_auth through the mtls aliases: the token bound to the certificate (cnf.x5t#S256), also in introspection at the alias")
    func clientCredentials() async throws {
        let issuer = try Self.variable("ISSUER")
        try await withNIOHTTPTransport(configuration: try Self.configuration()) { transport in
            let rp = try await RelyingParty.discover(
                issuer: issuer, clientID: try Self.variable("MTLS_CLIENT_ID"), authentication: .tlsClientAuth, transport: transport)
            #expect(rp.usesMutualTLS && rp.authenticatesWithMutualTLS && rp.sendsCertificateBoundTokens)
            #expect(rp.provider.tokenEndpoint?.absoluteString == issuer + "/mtls/token")
            #expect(rp.provider.introspectionEndpoint?.absoluteString == issuer + "/mtls/introspect")
            #expect(rp.provider.revocationEndpoint?.absoluteString == issuer + "/mtls/revoke")
            // glewlwyd 2.7.5 binds the tokens without advertising tls_client_certificate_bound_access_tokens.
            #expect(!rp.provider.tlsClientCertificateBoundAccessTokens)

            let scope = try Self.variable("SCOPE")
            let tokens = try await rp.tokenClient.clientCredentials(scopes: [scope])
            #expect(tokens.scopes.contains(scope))
            let thumbprint = try Self.thumbprint()
            #expect(try Self.boundThumbprint(tokens.accessToken) == thumbprint)

            let introspection = try await rp.tokenClient.introspect(tokens.accessToken)
            #expect(introspection.active)
            #expect(introspection.raw["cnf"]?.objectValue?["x5t#S256"]?.stringValue == thumbprint, "\(introspection.raw)")
        }
    }

    @Test("a browser login (the test user's agent) exchanged and refreshed at the mtls alias; both access tokens bound")
    func codeFlowAndRefresh() async throws {
        let issuer = try Self.variable("ISSUER")
        try await withNIOHTTPTransport(configuration: try Self.configuration()) { transport in
            let rp = try await RelyingParty.discover(
                issuer: issuer, clientID: try Self.variable("MTLS_CLIENT_ID"), authentication: .tlsClientAuth, transport: transport)
            let request = try rp.authorizationRequest(redirectURI: try Self.variable("REDIRECT_URI"), scopes: ["openid", try Self.variable("SCOPE")])
            let url = try await rp.authorizationURL(for: request)
            let agent = try await GlewlwydInteropTests.Agent.run([
                "authorize", url.absoluteString, "--cafile", try Self.variable("CA_FILE"), "--username", try Self.variable("USERNAME"),
                "--password-file", try Self.variable("PASSWORD_FILE"),
            ])
            #expect(agent.status == 0, "\(agent.output)")
            let callback = try #require(URL(string: agent.output.split(separator: "\n").first.map(String.init) ?? ""))
            let login = try await rp.completeLogin(callback: callback, for: request)
            let thumbprint = try Self.thumbprint()
            #expect(try Self.boundThumbprint(login.tokens.accessToken) == thumbprint)

            let refresh = try #require(login.tokens.refreshToken)
            let refreshed = try await rp.tokenClient.refresh(refresh)
            #expect(try Self.boundThumbprint(refreshed.accessToken) == thumbprint)
        }
    }

    @Test("without the certificate, the library refuses tls_client_auth before sending; another certificate is refused by glewlwyd")
    func refusals() async throws {
        let issuer = try Self.variable("ISSUER")
        try await withNIOHTTPTransport(configuration: try Self.configuration(certificate: false)) { transport in
            let rp = try await RelyingParty.discover(
                issuer: issuer, clientID: try Self.variable("MTLS_CLIENT_ID"), authentication: .tlsClientAuth, transport: transport)
            let error = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials(scopes: [try Self.variable("SCOPE")]) }
            #expect(error?.code == .invalidArgument)
        }
        // A self-signed certificate glewlwyd's CA did not issue (even with the registered subject): 403, empty body.
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        var configuration = try Self.configuration(certificate: false)
        configuration.clientCertificate = TLSClientCertificate(chainPEM: certificates.selfSigned.certificatePEM, privateKeyPEM: Secret(certificates.selfSigned.keyPEM))
        try await withNIOHTTPTransport(configuration: configuration) { transport in
            let rp = try await RelyingParty.discover(
                issuer: issuer, clientID: try Self.variable("MTLS_CLIENT_ID"), authentication: .tlsClientAuth, transport: transport)
            let error = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials(scopes: [try Self.variable("SCOPE")]) }
            #expect(error?.code == .providerError && error?.context["status"] == "403", "\(String(describing: error))")
        }
    }
}

/// Which variables name the HTTPS instance of glewlwyd.
enum GlewlwydTLSVariables {
    static let environment = ProcessInfo.processInfo.environment
    /// `OIDC_GLEWLWYD_TLS_` when `make test-package` runs both instances, else `OIDC_GLEWLWYD_` when
    /// the one running is the HTTPS one with its mTLS client; `nil` when neither is set.
    static let prefix: String? = ["OIDC_GLEWLWYD_TLS_", "OIDC_GLEWLWYD_"].first { prefix in
        environment[prefix + "MTLS_CLIENT_ID"] != nil && environment[prefix + "ISSUER"]?.hasPrefix("https://") == true
    }
}
