import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `RelyingParty.forResource` for a resource that takes only DPoP-bound tokens (RFC 9728
/// `dpop_bound_access_tokens_required`): DPoP turned on by itself when the configuration has it
/// off, a configured DPoP kept; over loopback HTTP against the test provider's resource.
@Suite("A relying party for a resource that requires DPoP", .timeLimit(.scaledMinutes(1)))
struct ForResourceDPoPTests {
    static func requiringDPoP(_ change: (inout TestProvider.Configuration) -> Void = { _ in }) -> TestProvider.Configuration {
        ForResourceTests.plainOAuth { configuration in
            configuration.protectedResource.requiresDPoP = true
            change(&configuration)
        }
    }

    static func status(_ url: URL, _ authorization: String, proof: String? = nil) async throws -> Int {
        var request = HTTPRequest(url: url)
        request.headers.add("Authorization", authorization)
        if let proof { request.headers.add("DPoP", proof) }
        return try await NIOHTTPTransport.shared.send(request, options: HTTPRequestOptions()).status
    }

    @Test("DPoP off (the default): turned on for the resource, a new ES256 key kept with the login; the resource takes the bound token with its proof and refuses it as a bearer token")
    func turnedOn() async throws {
        try await withTestProvider(Self.requiringDPoP()) { provider in
            let url = try #require(URL(string: provider.resourceURL))
            let rp = try await RelyingParty.forResource(url)
            #expect(rp.protectedResource?.dpopBoundAccessTokensRequired == true)
            #expect(rp.configuration.dpop == .newKeyPerLogin(.es256))
            let login = try await ForResourceTests.login(rp)
            let key = try #require(login.dpopKey)
            #expect(key.algorithm == .es256)
            #expect(login.tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame)
            #expect(await provider.tokenRequestParameters().last?["resource"] == provider.resourceURL)
            let token = login.tokens.accessToken
            let proof = try key.proof(method: "GET", url: url, accessToken: token)
            #expect(try await Self.status(url, "DPoP " + token.revealedValue, proof: proof) == 200)
            #expect(try await Self.status(url, "Bearer " + token.revealedValue) == 401)
        }
    }

    @Test("the key's algorithm is one the resource and the server take; a configured DPoP is kept as it is; a resource that does not require DPoP gets none")
    func algorithmAndConfigured() async throws {
        try await withTestProvider(Self.requiringDPoP { $0.dpop.algorithms = [.ps256, .edDSA] }) { provider in
            let url = try #require(URL(string: provider.resourceURL))
            #expect(try await RelyingParty.forResource(url).configuration.dpop == .newKeyPerLogin(.edDSA))
            let configured = RelyingParty.Configuration(dpop: .newKeyPerLogin(.ps256))
            #expect(try await RelyingParty.forResource(url, configuration: configured).configuration.dpop == .newKeyPerLogin(.ps256))
        }
        try await withTestProvider(ForResourceTests.plainOAuth()) { provider in
            let rp = try await RelyingParty.forResource(try #require(URL(string: provider.resourceURL)))
            #expect(rp.protectedResource?.dpopBoundAccessTokensRequired == false)
            #expect(rp.configuration.dpop == .off)
        }
    }
}
