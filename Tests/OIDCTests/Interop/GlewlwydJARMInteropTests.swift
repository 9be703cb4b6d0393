import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// JARM (signed authorization responses) against glewlwyd 2.7.5, started with
/// `oauth-fapi-allow-jarm` by `scripts/glewlwyd.sh start` (docs/glewlwyd.md): its discovery lists
/// `jwt` and `query.jwt`, and it signs the response with its ID-token key (RS256).
@Suite(
    "Interop with glewlwyd: JARM", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_ISSUER"] != nil, "set OIDC_GLEWLWYD_ISSUER (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydJARMInteropTests {
    typealias Interop = GlewlwydInteropTests

    /// The callback the test user agent printed for `url`.
    static func callback(for url: URL, redirectURI: String) async throws -> URL {
        let agent = try await Interop.Agent.run(["authorize", url.absoluteString])
        let line = agent.output.split(separator: "\n").map(String.init).first { $0.hasPrefix(redirectURI) }
        return try #require(line.flatMap(URL.init(string:)), "\(agent.output)")
    }

    @Test("a public client asks for response_mode=jwt and query.jwt: glewlwyd's callback carries only response, verified with its JWKS, and the login completes")
    func login() async throws {
        let redirectURI = try Interop.variable("REDIRECT_URI")
        var rp = try await RelyingParty.discover(issuer: Interop.issuer, clientID: try Interop.variable("PUBLIC_CLIENT_ID"))
        let modes = try #require(rp.provider.responseModesSupported)
        #expect(modes.contains("jwt") && modes.contains("query.jwt"), "\(modes)")
        #expect(rp.provider.authorizationSigningAlgorithms.contains("RS256"))
        for mode in [AuthorizationResponseMode.jwt, .queryJWT] {
            rp.responseMode = mode
            let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Interop.scope])
            let callback = try await Self.callback(for: try await rp.authorizationURL(for: request), redirectURI: redirectURI)
            #expect(URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) == ["response"])
            let login = try await rp.completeLogin(callback: callback, for: request)
            #expect(login.idToken.claims.issuer == Interop.issuer)
            #expect(login.idToken.claims.nonce == request.nonce)
        }
    }

    @Test("glewlwyd's signed response changed on the way (its claims swapped for another login's) is refused with invalidSignature")
    func tampered() async throws {
        let redirectURI = try Interop.variable("REDIRECT_URI")
        var rp = try await RelyingParty.discover(issuer: Interop.issuer, clientID: try Interop.variable("PUBLIC_CLIENT_ID"))
        rp.responseMode = .jwt
        let request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Interop.scope])
        let callback = try await Self.callback(for: try await rp.authorizationURL(for: request), redirectURI: redirectURI)
        let other = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Interop.scope])
        let otherCallback = try await Self.callback(for: try await rp.authorizationURL(for: other), redirectURI: redirectURI)
        func parts(_ url: URL) throws -> [Substring] {
            try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value).split(separator: ".")
        }
        let ours = try parts(callback), theirs = try parts(otherCallback)
        // The other login's claims (its code, with this login's state lost) under this login's signature.
        let forged = [ours[0], theirs[1], ours[2]].joined(separator: ".")
        let url = try #require(URL(string: redirectURI + "?response=" + forged))
        let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: url, for: request) }
        #expect(error?.code == .invalidSignature)
    }
}
