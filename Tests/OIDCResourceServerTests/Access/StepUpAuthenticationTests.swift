import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

/// RFC 9470: a route that requires an authentication context class (`acr`) or a recent
/// authentication (`auth_time` within `max_age`) refuses a token that falls short with 401
/// `insufficient_user_authentication`, its challenge naming what would do; byte for byte.
@Suite("Step-up authentication (RFC 9470): acr_values and max_age", .timeLimit(.minutes(1)))
struct StepUpAuthenticationTests {
    static let sca = AuthenticationRequirement(acrValues: ["urn:bank:sca", "urn:bank:sca2"])

    @Test("an acr the route does not take, or none: 401 insufficient_user_authentication with acr_values, on the Bearer challenge; the right acr passes")
    func acr() async throws {
        try await ResourceFixture.run { fixture in
            let low = try await fixture.token(extra: ["acr": "urn:bank:password"])
            let refusal = try await Self.refusal(fixture, ResourceFixture.bearer(low), Self.sca)
            #expect(refusal.status == 401 && refusal.rule == .insufficientUserAuthentication && refusal.error == "insufficient_user_authentication")
            #expect(refusal.challenges == [
                #"Bearer error="insufficient_user_authentication", error_description="A different authentication level is required: the access token's acr is not one of acr_values.", acr_values="urn:bank:sca urn:bank:sca2", resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#,
                #"DPoP algs="RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519", resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#,
            ])
            let none = try await Self.refusal(fixture, ResourceFixture.bearer(try await fixture.token()), Self.sca)
            #expect(none.rule == .insufficientUserAuthentication)
            let strong = try await fixture.token(extra: ["acr": "urn:bank:sca2"])
            let access = try await fixture.server.verify(ResourceFixture.bearer(strong), requiring: ["orders:read"], authentication: Self.sca)
            #expect(access.claims["acr"] == .string("urn:bank:sca2"))
        }
    }

    @Test("max_age: an auth_time older than it, or none, is refused with max_age on the challenge; a recent one passes; both rules named together")
    func maxAge() async throws {
        try await ResourceFixture.run { fixture in
            let now = Int(fixture.clock.now().timeIntervalSince1970)
            let recent = AuthenticationRequirement(maxAge: 300)
            let old = try await fixture.token(extra: ["auth_time": now - 301])
            let refusal = try await Self.refusal(fixture, ResourceFixture.bearer(old), recent)
            #expect(refusal.challenges == [
                #"Bearer error="insufficient_user_authentication", error_description="More recent authentication is required: the user authenticated more than max_age seconds ago.", max_age="300", resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#,
                #"DPoP algs="RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519", resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#,
            ])
            let missing = try await Self.refusal(fixture, ResourceFixture.bearer(try await fixture.token()), recent)
            #expect(missing.message.contains("no auth_time"))
            _ = try await fixture.server.verify(ResourceFixture.bearer(try await fixture.token(extra: ["auth_time": now - 299])), authentication: recent)

            // An auth_time past the leeway (60 s) ahead, or one that is no NumericDate: a broken claim.
            let future = try await Self.refusal(fixture, ResourceFixture.bearer(try await fixture.token(extra: ["auth_time": now + 3600])), recent)
            #expect(future.rule == .invalidClaim && future.error == "invalid_token" && future.message.contains("future"), "\(future)")
            let text = try await Self.refusal(fixture, ResourceFixture.bearer(try await fixture.token(extra: ["auth_time": "\(now)"])), recent)
            #expect(text.rule == .invalidClaim, "\(text)")

            let both = AuthenticationRequirement(acrValues: ["urn:bank:sca"], maxAge: 60)
            let stale = try await fixture.token(extra: ["acr": "urn:bank:sca", "auth_time": now - 61])
            let twice = try await Self.refusal(fixture, ResourceFixture.bearer(stale), both)
            #expect(twice.challenges.first?.hasSuffix(#"acr_values="urn:bank:sca", max_age="60", resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#) == true, "\(twice.challenges)")
            // The scope is checked first: a token without the route's scope gets insufficient_scope.
            let refused = try await Self.refusal(fixture, ResourceFixture.bearer(stale), both, scopes: ["orders:write"])
            #expect(refused.rule == .insufficientScope)
        }
    }

    @Test("a DPoP request that falls short: the error on the DPoP challenge first, with the Bearer one after")
    func dpopChallenge() async throws {
        try await ResourceFixture.run({ $0.dpop.mode = .allowed }) { fixture in
            let key = try DPoPKey.generate(.es256)
            let token = try await fixture.token(jkt: key.thumbprint, extra: ["acr": "urn:bank:password"])
            let refusal = try await Self.refusal(fixture, try fixture.dpop(token, key: key), Self.sca)
            #expect(refusal.status == 401)
            #expect(refusal.challenges.first?.hasPrefix(#"DPoP error="insufficient_user_authentication", error_description="#) == true, "\(refusal.challenges)")
            #expect(refusal.challenges.first?.contains(#"acr_values="urn:bank:sca urn:bank:sca2", algs=""#) == true, "\(refusal.challenges)")
            #expect(refusal.challenges.dropFirst().first == #"Bearer resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders""#)
        }
    }

    static func refusal(
        _ fixture: ResourceFixture, _ request: ResourceRequest, _ requirement: AuthenticationRequirement, scopes: Set<String> = []
    ) async throws -> AccessRefusal {
        do {
            let access = try await fixture.server.verify(request, requiring: scopes, authentication: requirement)
            throw ResourceFixture.UnexpectedAccess(subject: access.subject)
        } catch let refusal as AccessRefusal {
            return refusal
        }
    }
}
