import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --resource URL --identity-assertion-from PROFILE` (MCP enterprise-managed
/// authorization): the login of PROFILE at an identity provider (one TestProvider) traded there for
/// an ID-JAG (RFC 8693), which the resource's authorization server (another TestProvider, trusting
/// the first's keys) takes in the JWT bearer grant; the built binary, no browser for the second login.
@Suite("oidc login --identity-assertion-from", .timeLimit(.scaledMinutes(3)))
struct IdentityAssertionCommandTests {
    static let secret = "agent-secret-0123456789abcdefghijklmnop"
    static let agent = TestProvider.Client.confidential(id: "agent", secret: secret)

    /// The identity provider, then the resource's authorization server that trusts it (or not).
    static func providers(trusting: Bool = true, _ body: (TestProvider, TestProvider) async throws -> Void) async throws {
        try await withTestProvider(TestProvider.Configuration(clients: [.default, agent])) { idp in
            var configuration = TestProvider.Configuration(clients: [.default, agent])
            configuration.metadataDocuments = .oauthOnly
            if trusting {
                configuration.trustedAssertionIssuers = [TestProvider.TrustedAssertionIssuer(issuer: idp.issuer, jwks: try await idp.jwksJSON())]
            }
            try await withTestProvider(configuration) { server in try await body(idp, server) }
        }
    }

    @Test("the IdP login's ID token exchanged for an ID-JAG for the resource's server, traded there with resource; no browser; request works; the ID-JAG never shown")
    func login() async throws {
        try await Self.providers { idp, server in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "agent-secret", Self.secret)
            let corp = try await sandbox.run(["login", "--issuer", idp.issuer, "--client-id", "agent", "--client-secret-file", secretFile, "--profile", "corp"])
            #expect(corp.status == 0, "\(corp.stderr)")
            let idToken = try #require(try sandbox.storedLogin("corp")?.tokens.idToken?.revealedValue)

            let login = try await sandbox.run([
                "-vv", "login", "--resource", server.resourceURL, "--identity-assertion-from", "corp", "--client-id", "agent",
                "--client-secret-file", secretFile, "--profile", "mcp",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            let exchange = try #require(await idp.tokenRequestParameters().last)
            #expect(exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange")
            #expect(exchange["subject_token"] == idToken && exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token")
            #expect(exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag")
            #expect(exchange["audience"] == server.issuer && exchange["resource"] == server.resourceURL, "\(exchange)")
            let grant = try #require(await server.tokenRequestParameters().last)
            #expect(grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" && grant["resource"] == server.resourceURL, "\(grant)")
            let assertion = try #require(grant["assertion"])
            let jag = try UnverifiedJWT(assertion)
            #expect(jag.header["typ"]?.stringValue == "oauth-id-jag+jwt" && jag.claims["aud"]?.stringValue == server.issuer)
            #expect(jag.claims["client_id"]?.stringValue == "agent" && jag.claims["resource"]?.stringValue == server.resourceURL)
            #expect(!login.stderr.contains(assertion) && !login.stderr.contains(idToken), "neither the ID-JAG nor the ID token is shown")
            #expect(await server.requestCount(.authorize) == 0, "no browser")
            #expect(await server.requestCount(.token) == 1)
            #expect(await idp.grantCount("urn:ietf:params:oauth:grant-type:token-exchange") == 1)
            let stored = try #require(try sandbox.storedLogin("mcp"))
            #expect(stored.resource == server.resourceURL && stored.issuer == server.issuer)
            LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/mcp.json", encoding: .utf8)
            #expect(profile.contains(#""identity_assertion_from" : "corp""#), "\(profile)")

            let request = try await sandbox.run(["request", server.resourceURL, "--profile", "mcp"])
            #expect(request.status == 0 && request.stderr.contains("HTTP 200"), "\(request.stderr)")

            // Without --client-id: the client the ID-JAG names (its client_id), with its secret there.
            let named = try await sandbox.run([
                "login", "--resource", server.resourceURL, "--identity-assertion-from", "corp", "--client-secret-file", secretFile, "--profile", "named",
            ])
            #expect(named.status == 0, "\(named.stderr)")
            #expect(try sandbox.storedLogin("named")?.clientID == "agent")
            #expect(await server.grantCount("urn:ietf:params:oauth:grant-type:jwt-bearer") == 2)
        }
    }

    @Test("refusals: a server that does not trust the IdP (exit 4, invalid_grant, nothing stored); no IdP login (exit 4 naming it); without --resource, or the same profile (exit 2)")
    func refusals() async throws {
        try await Self.providers(trusting: false) { idp, server in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "agent-secret", Self.secret)
            let arguments = ["login", "--resource", server.resourceURL, "--client-id", "agent", "--client-secret-file", secretFile]
            let none = try await sandbox.run(arguments + ["--identity-assertion-from", "corp", "--profile", "mcp"])
            #expect(none.status == 4 && none.stderr.contains("'corp'"), "\(none.stderr)")

            let corp = try await sandbox.run(["login", "--issuer", idp.issuer, "--client-id", "agent", "--client-secret-file", secretFile, "--profile", "corp"])
            #expect(corp.status == 0, "\(corp.stderr)")
            let refused = try await sandbox.run(arguments + ["--identity-assertion-from", "corp", "--profile", "mcp"])
            #expect(refused.status == 4 && refused.stderr.contains("invalid_grant"), "\(refused.stderr)")
            #expect(try sandbox.storedLogin("mcp") == nil)

            let noResource = try await sandbox.run(["login", "--issuer", server.issuer, "--client-id", "agent", "--identity-assertion-from", "corp", "--profile", "x"])
            #expect(noResource.status == 2 && noResource.stderr.contains("--resource"), "\(noResource.stderr)")
            let same = try await sandbox.run(arguments + ["--identity-assertion-from", "mcp2", "--profile", "mcp2"])
            #expect(same.status == 2, "\(same.stderr)")

        }
    }
}
