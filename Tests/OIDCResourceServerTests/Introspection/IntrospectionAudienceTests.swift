import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Introspection answers and aud: taken when absent by default, refused when required")
struct IntrospectionAudienceTests {
    /// Takes `aud` out of the provider's answers, as servers that leave it out do (RFC 7662 makes
    /// it optional): a stage of the introspecting client's pipeline, on a real answer.
    struct DroppingAudience: HTTPStage {
        func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
            var response = try await next(request)
            if var answer = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any], answer["aud"] != nil {
                answer.removeValue(forKey: "aud")
                response.body = Array((try? JSONSerialization.data(withJSONObject: answer)) ?? Data(response.body))
            }
            return response
        }
    }

    @Test("an answer without aud is taken by default, refused with audience_mismatch when requiresAudience is on; one with this resource's aud is taken either way")
    func requiresAudience() async throws {
        try await IntrospectionTests.run({ $0.client.stages = [DroppingAudience()] }) { provider, server, _ in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let access = try await server.verify(ResourceFixture.bearer(tokens.accessToken.revealedValue))
            #expect(access.audience.isEmpty && access.source == .introspection)
        }
        try await IntrospectionTests.run({ $0.client.stages = [DroppingAudience()]; $0.requiresAudience = true }) { provider, server, _ in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let refusal = try await ResourceFixture.refusalFrom(server, ResourceFixture.bearer(tokens.accessToken.revealedValue))
            #expect(refusal.rule == .audienceMismatch && refusal.status == 401 && refusal.error == "invalid_token")
            #expect(await provider.requestCount(.introspection) == 1)
        }
        try await IntrospectionTests.run({ $0.requiresAudience = true }) { provider, server, _ in
            let tokens = try await provider.issueTokens(clientID: "api", scope: "orders:read")
            let access = try await server.verify(ResourceFixture.bearer(tokens.accessToken.revealedValue))
            #expect(access.audience == ["api"])
        }
    }
}
