import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `resource` (RFC 8707) on the grants without a browser: client credentials and the device flow.
@Suite("Resource indicators on client credentials and the device flow", .timeLimit(.scaledMinutes(1)))
struct ResourceGrantsTests {
    @Test("client credentials carry the token client's resource; the token's aud is the resource")
    func clientCredentials() async throws {
        var configuration = TestProvider.Configuration()
        configuration.clients = [.confidential(id: "service", secret: "service-secret")]
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(client: .confidential(id: "service", secret: "service-secret"))
            var client = rp.tokenClient
            client.resource = provider.resourceURL
            let tokens = try await client.clientCredentials(scopes: ["read"])
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)
            #expect(try UnverifiedJWT(tokens.accessToken.revealedValue).claims["aud"]?.stringValue == provider.resourceURL)
        }
    }

    @Test("a device login for a resource sends it on the device authorization and the polls, and keeps it")
    func deviceFlow() async throws {
        var configuration = TestProvider.Configuration()
        configuration.deviceFlow = .init(expiresIn: 60, interval: 1)
        try await withTestProvider(configuration) { provider in
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)), clientID: TestProvider.Client.default.id)
            let login = try await rp.deviceLogin(scopes: ["read"])
            Task { _ = try await TestBrowser().open(try #require(login.verificationURIComplete)) }
            let stored = try await login.waitForLogin()
            #expect(stored.resource == provider.resourceURL)
            #expect(await provider.requestParameters(.deviceAuthorization).last?["resource"] == provider.resourceURL)
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)
            #expect(try UnverifiedJWT(stored.tokens.accessToken.revealedValue).claims["aud"]?.stringValue == provider.resourceURL)
        }
    }

    @Test("a server that offers the device flow but refuses its grant type in a registration (invalid_client_metadata, as glewlwyd 2.7.5): registered once more without it")
    func deviceGrantRefusedInRegistration() async throws {
        let configuration = ForResourceTests.plainOAuth { $0.deviceFlow = .init(expiresIn: 60, interval: 1) }
        try await withTestProvider(configuration) { provider in
            await provider.failNextRequests(1, to: .registration, with: .oauthError("invalid_client_metadata"))
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)))
            #expect(await provider.requestCount(.registration) == 2)
            let grantTypes = try #require(await provider.registeredGrantTypes(of: rp.clientID))
            #expect(Set(grantTypes) == ["authorization_code", "refresh_token"])
        }
        try await withTestProvider(ForResourceTests.plainOAuth()) { provider in
            // Another refusal is the answer: not registered again.
            await provider.failNextRequests(1, to: .registration, with: .oauthError("invalid_redirect_uri"))
            let error = await #expect(throws: OIDCError.self) { try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL))) }
            #expect(error?.providerError?.error == "invalid_redirect_uri")
            #expect(await provider.requestCount(.registration) == 1)
        }
    }

    @Test("a device login at a plain OAuth server (RFC 8414 only, no jwks_uri): a registered client with the device grant, exactly the scopes asked, resource sent, kept without a subject")
    func deviceFlowPlainOAuth() async throws {
        let configuration = ForResourceTests.plainOAuth { $0.deviceFlow = .init(expiresIn: 60, interval: 1) }
        try await withTestProvider(configuration) { provider in
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)))
            #expect(rp.protectedResource?.isPlainOAuth == true && rp.keys == nil)
            #expect(await provider.registeredGrantTypes(of: rp.clientID)?.contains("urn:ietf:params:oauth:grant-type:device_code") == true)
            let login = try await rp.deviceLogin(scopes: ["read"])
            Task { _ = try await TestBrowser().open(try #require(login.verificationURIComplete)) }
            let stored = try await login.waitForLogin()
            #expect(stored.subject == nil && stored.tokens.idToken == nil)
            #expect(stored.resource == provider.resourceURL && stored.clientID == rp.clientID)
            let device = try #require(await provider.requestParameters(.deviceAuthorization).last)
            #expect(device["scope"] == "read" && device["resource"] == provider.resourceURL, "\(device)")
            #expect(try UnverifiedJWT(stored.tokens.accessToken.revealedValue).claims["aud"]?.stringValue == provider.resourceURL)
        }
    }
}
