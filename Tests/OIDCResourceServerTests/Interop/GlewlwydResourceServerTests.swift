import Foundation
import OIDC
import OIDCResourceServer
import OIDCTestSupport
import Testing

/// The kit against glewlwyd 2.7.5's access tokens: RFC 9068 JWTs (`typ` `at+jwt`, RS256, `kid`)
/// whose `aud` is the granted scopes as one string (`api.read` for a client-credentials token of
/// that scope: docs/glewlwyd.md), plain from `swift-confidential` and DPoP-bound from
/// `swift-dpop`. Keys from glewlwyd's `jwks_uri` over real HTTP.
@Suite(
    "Resource server against glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_DPOP_CLIENT_ID"] != nil, "set the OIDC_GLEWLWYD_* variables (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydResourceServerTests {
    static let environment = ProcessInfo.processInfo.environment
    static let issuer = environment["OIDC_GLEWLWYD_ISSUER"] ?? ""
    static let scope = environment["OIDC_GLEWLWYD_SCOPE"] ?? "api.read"
    static let target = "https://api.example/reports"

    static func variable(_ name: String) throws -> String {
        try #require(environment["OIDC_GLEWLWYD_" + name], "OIDC_GLEWLWYD_\(name) is not set: export what scripts/glewlwyd.sh start prints")
    }

    static func secret(_ name: String) throws -> Secret {
        Secret(try String(contentsOfFile: try variable(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A server trusting glewlwyd's `oidc` issuer, for the audience glewlwyd writes (`api.read`).
    static func server(audiences: Set<String> = [scope], clock: ManualClock, _ configure: (inout ResourceServer.Configuration) -> Void = { _ in }) async throws -> ResourceServer {
        let provider = try await ProviderConfiguration.discover(issuer: issuer, transport: NIOHTTPTransport.shared)
        let jwksURI = try #require(provider.jwksURI)
        var configuration = ResourceServer.Configuration(
            resource: URL(string: "https://api.example/")!, issuers: [TrustedIssuer(issuer: issuer, jwksURI: jwksURI, transport: NIOHTTPTransport.shared)]
        )
        configuration.audiences = audiences
        configuration.now = { clock.now() }
        configure(&configuration)
        return try ResourceServer(configuration)
    }

    static func refusal(_ server: ResourceServer, _ request: ResourceRequest) async throws -> AccessRefusal {
        try await ResourceFixture.refusalFrom(server, request)
    }

    @Test("a plain at+jwt token is accepted; tampered, expired or for another audience it is refused with invalid_token")
    func bearer() async throws {
        let rp = try await RelyingParty.discover(
            issuer: Self.issuer, clientID: try Self.variable("CONFIDENTIAL_CLIENT_ID"),
            authentication: .clientSecretBasic(try Self.secret("CONFIDENTIAL_CLIENT_SECRET_FILE"))
        )
        let token = try await rp.tokenClient.clientCredentials(scopes: [Self.scope]).accessToken.revealedValue
        let clock = ManualClock()
        let server = try await Self.server(clock: clock)
        let access = try await server.verify(ResourceFixture.bearer(token, url: Self.target), requiring: [Self.scope])
        #expect(access.clientID == rp.clientID && access.issuer == Self.issuer && access.scopes == [Self.scope] && access.binding == .bearer)
        _ = try await server.verify(ResourceFixture.bearer(token, url: Self.target))  // a bearer token is reusable

        var parts = token.split(separator: ".").map(String.init)
        var claims = try #require(Base64URLEncoding.decode(parts[1]))
        claims = Array(String(decoding: claims, as: UTF8.self).replacingOccurrences(of: Self.scope, with: "api.admin").utf8)
        parts[1] = Base64URLEncoding.encode(claims)
        let tampered = try await Self.refusal(server, ResourceFixture.bearer(parts.joined(separator: "."), url: Self.target))
        #expect(tampered.rule == .invalidSignature && tampered.error == "invalid_token" && tampered.status == 401)

        let elsewhere = try await Self.server(audiences: ["https://other.example/"], clock: clock)
        let other = try await Self.refusal(elsewhere, ResourceFixture.bearer(token, url: Self.target))
        #expect(other.rule == .audienceMismatch && other.challenges.first?.hasPrefix(#"Bearer error="invalid_token""#) == true)

        clock.advance(3_600 + 61)
        let expired = try await Self.refusal(server, ResourceFixture.bearer(token, url: Self.target))
        #expect(expired.rule == .tokenExpired && expired.error == "invalid_token")
    }

    @Test("a DPoP-bound at+jwt token with a proof by its key is accepted; the proof replayed, or the token sent as Bearer, is refused")
    func dpop() async throws {
        let rp = try await RelyingParty.discover(
            issuer: Self.issuer, clientID: try Self.variable("DPOP_CLIENT_ID"), clientSecret: try Self.secret("DPOP_CLIENT_SECRET_FILE")
        )
        let key = try DPoPKey.generate()
        let tokens = try await rp.tokenClient(proving: key).clientCredentials(scopes: [Self.scope])
        #expect(tokens.tokenType == "DPoP")
        let token = tokens.accessToken.revealedValue
        let clock = ManualClock()
        let server = try await Self.server(clock: clock) { $0.dpop.mode = .required }
        let proof = try key.proof(method: "GET", url: URL(string: Self.target)!, accessToken: tokens.accessToken, now: clock.now())
        let request = ResourceFixture.request([("Authorization", "DPoP " + token), ("DPoP", proof)], url: Self.target)
        let access = try await server.verify(request, requiring: [Self.scope])
        #expect(access.binding == .dpop(keyThumbprint: key.thumbprint) && access.tokenType == "DPoP")

        let replay = try await Self.refusal(server, request)
        #expect(replay.rule == .replayedProof && replay.error == "invalid_dpop_proof")
        #expect(replay.challenges == [
            #"DPoP error="invalid_dpop_proof", error_description="The DPoP proof was used before: a proof is good for one request.", algs="RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519", resource_metadata="https://api.example/.well-known/oauth-protected-resource""#
        ])
        let asBearer = try await Self.refusal(server, ResourceFixture.bearer(token, url: Self.target))
        #expect(asBearer.rule == .boundTokenAsBearer)
        let other = try DPoPKey.generate()
        let foreign = try other.proof(method: "GET", url: URL(string: Self.target)!, accessToken: tokens.accessToken, now: clock.now())
        let stolen = try await Self.refusal(server, ResourceFixture.request([("Authorization", "DPoP " + token), ("DPoP", foreign)], url: Self.target))
        #expect(stolen.rule == .proofKeyMismatch)
    }
}
