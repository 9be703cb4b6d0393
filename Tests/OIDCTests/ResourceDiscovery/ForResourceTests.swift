import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `RelyingParty.forResource` against the test provider's protected resource, over loopback HTTP:
/// discovery, registration kept and reused, resource-bound logins at a plain OAuth server.
@Suite("A relying party from a resource's URL", .timeLimit(.scaledMinutes(1)))
struct ForResourceTests {
    /// Opens the URL in the background and signs in, as a system browser does.
    static func plainOAuth(_ change: (inout TestProvider.Configuration) -> Void = { _ in }) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.registration = TestProvider.Registration()
        configuration.registration?.exactLoopbackPort = true
        configuration.metadataDocuments = .oauthOnly
        configuration.protectedResource.challengeScope = "read write"
        change(&configuration)
        return configuration
    }

    static func login(_ rp: RelyingParty, scopes: [String]? = nil) async throws -> StoredLogin {
        var login = rp.loopbackLogin(scopes: scopes)
        login.browser = TestBrowser().launcher
        return try await login.runLogin()
    }

    @Test("a plain OAuth server: registered once, the challenge's scopes, no openid, no subject, the token bound to the resource")
    func plainOAuthLogin() async throws {
        try await withTestProvider(Self.plainOAuth()) { provider in
            let store = InMemoryRegistrationStore()
            let url = try #require(URL(string: provider.resourceURL))
            let rp = try await RelyingParty.forResource(url, registrations: store)
            let discovered = try #require(rp.protectedResource)
            #expect(discovered.isPlainOAuth)
            #expect(discovered.clientSource == .registered)
            #expect(discovered.metadataURL.absoluteString == provider.resourceMetadataURL)
            #expect(discovered.defaultScopes == ["read", "write"])
            let port = try #require(discovered.callbackPort)
            #expect(await provider.registeredRedirectURIs(of: rp.clientID) == ["http://127.0.0.1:\(port)/callback"])

            let login = try await Self.login(rp)
            #expect(login.subject == nil)
            #expect(login.resource == provider.resourceURL)
            #expect(login.tokens.scopes == ["read", "write"])
            let authorize = try #require(await provider.requestParameters(.authorize).last)
            #expect(authorize["scope"] == "read write")
            #expect(authorize["resource"] == provider.resourceURL)
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)
            var request = HTTPRequest(url: url)
            request.headers.add("Authorization", "Bearer " + login.tokens.accessToken.revealedValue)
            #expect(try await NIOHTTPTransport.shared.send(request, options: HTTPRequestOptions()).status == 200)

            // A refresh sends the same resource.
            let refreshToken = try #require(login.tokens.refreshToken)
            _ = try await rp.tokenClient.refresh(refreshToken)
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)

            // Later: the same registration and port, no new registration.
            let again = try await RelyingParty.forResource(url, registrations: store)
            #expect(again.clientID == rp.clientID)
            #expect(again.protectedResource?.clientSource == .storedRegistration)
            #expect(again.protectedResource?.callbackPort == port)
            _ = try await Self.login(again, scopes: ["read"])
            #expect(await provider.registrationCount() == 1)
        }
    }

    @Test("an OpenID provider named only by the challenge (after a Negotiate one), with a given client id: the ID token is verified")
    func openIDProviderFromChallenge() async throws {
        var configuration = TestProvider.Configuration()
        configuration.protectedResource.metadataLocation = .challengeOnly
        configuration.protectedResource.precedingChallenge = "Negotiate"
        try await withTestProvider(configuration) { provider in
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)), clientID: TestProvider.Client.default.id)
            #expect(rp.protectedResource?.isPlainOAuth == false)
            #expect(rp.protectedResource?.clientSource == .given)
            #expect(rp.protectedResource?.metadataURL.absoluteString == provider.resourceMetadataURL)
            let login = try await Self.login(rp, scopes: ["read"])
            #expect(login.subject == TestUser.default.subject)
            #expect(login.resource == provider.resourceURL)
            #expect(await provider.requestParameters(.authorize).last?["scope"] == "openid read")
        }
    }

    @Test("a provider that refuses resource on a refresh gets one retry without it")
    func invalidTargetRetry() async throws {
        try await withTestProvider(Self.plainOAuth { $0.protectedResource.refusesResourceOnRefresh = true }) { provider in
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)))
            let login = try await Self.login(rp)
            await provider.resetCounters()
            _ = try await rp.tokenClient.refresh(try #require(login.tokens.refreshToken))
            let refreshes = await provider.tokenRequestParameters()
            #expect(refreshes.map { $0["resource"] } == [provider.resourceURL, nil])
        }
    }

    @Test("a refused registration is forgotten and made again")
    func refusedRegistration() async throws {
        try await withTestProvider(Self.plainOAuth()) { provider in
            let store = InMemoryRegistrationStore()
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)), registrations: store)
            await provider.forgetRegistrations()
            let error = await #expect(throws: OIDCError.self) { _ = try await rp.tokenClient.refresh(Secret("stale")) }
            let refused = try #require(error)
            let replacement = try await rp.replacingRefusedRegistration(after: refused, registrations: store)
            let replaced = try #require(replacement)
            #expect(replaced.clientID != rp.clientID)
            #expect(replaced.protectedResource?.callbackPort == rp.protectedResource?.callbackPort)
            #expect(try await store.registration(for: provider.issuer)?.clientID == replaced.clientID)
            #expect(await provider.registrationCount() == 2)
        }
    }
}
