import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The JWT bearer grant (RFC 7523 §2.1) against TestProvider over loopback HTTP: a workload's JWT,
/// signed by an issuer the provider trusts, traded for tokens; refusals; a session that presents
/// the assertion as it is now each time new tokens are needed.
@Suite("JWT bearer grant (RFC 7523)", .timeLimit(.scaledMinutes(1)))
struct JWTBearerGrantTests {
    /// A provider that trusts the workload issuer's JWTs signed by `key`, and a confidential client.
    static func configuration(_ key: TestSigningKey) throws -> TestProvider.Configuration {
        try WorkloadAssertion.trusting(key, in: TestProvider.Configuration(clients: [.default, ServiceGrantsTests.daemon]))
    }

    static func assertion(_ key: TestSigningKey, subject: String = "system:serviceaccount:ci:builder", audience: String, lifetime: Int = 600) throws -> Secret {
        try WorkloadAssertion.make(key, subject: subject, audience: audience, lifetime: lifetime)
    }

    @Test("a trusted workload JWT gives an access token about its sub, sent as assertion with scope and resource; no refresh or ID token")
    func grant() async throws {
        let key = try TestSigningKey.generate(.es256, keyID: "workload-1")
        try await withTestProvider(try Self.configuration(key)) { provider in
            let rp = try await provider.relyingParty(client: ServiceGrantsTests.daemon)
            let jwt = try Self.assertion(key, audience: provider.issuer)
            let tokens = try await rp.tokenClient.jwtBearer(
                assertion: Secret(jwt.revealedValue + "\n"), scopes: ["reports.read"], parameters: [OAuthParameter("resource", "https://api.example")])
            #expect(tokens.refreshToken == nil && tokens.idToken == nil && tokens.scopes == ["reports.read"])
            let sent = try #require(await provider.tokenRequestParameters().last)
            #expect(sent["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            #expect(sent["assertion"] == jwt.revealedValue, "trimmed, sent as it is")
            #expect(sent["scope"] == "reports.read" && sent["resource"] == "https://api.example")
            let me = try await rp.transport.send(
                HTTPRequest(url: provider.protectedResource, headers: ["Authorization": "Bearer \(tokens.accessToken.revealedValue)"]))
            #expect(String(decoding: me.body, as: UTF8.self).contains("\"sub\":\"system:serviceaccount:ci:builder\""))
            // A public client may present one too: the grant needs no client authentication (§3.1).
            let publicClient = try await provider.relyingParty()
            #expect(try await publicClient.tokenClient.jwtBearer(assertion: jwt).accessToken.revealedValue.isEmpty == false)
        }
    }

    @Test("refusals: an expired, untrusted or mis-addressed JWT is invalid_grant after one request; a malformed one or an assertion parameter is refused before sending")
    func refusals() async throws {
        let key = try TestSigningKey.generate(.es256)
        let stranger = try TestSigningKey.generate(.es256)
        try await withTestProvider(try Self.configuration(key)) { provider in
            let client = try await provider.relyingParty(client: ServiceGrantsTests.daemon).tokenClient
            let grant = GrantType.jwtBearer.rawValue
            for (assertion, why) in [
                (try Self.assertion(key, audience: provider.issuer, lifetime: -30), "expired"),
                (try Self.assertion(stranger, audience: provider.issuer), "signed by a key the issuer does not have"),
                (try Self.assertion(key, audience: "https://other.example"), "for another server"),
            ] {
                let before = await provider.grantCount(grant)
                let refused = await #expect(throws: OIDCError.self, "\(why)") { try await client.jwtBearer(assertion: assertion) }
                #expect(refused?.code == .providerError && refused?.providerError?.error == "invalid_grant", "\(why)")
                #expect(await provider.grantCount(grant) == before + 1, "one request, no retry: \(why)")
                #expect(!(refused.map { "\($0)" } ?? "").contains(assertion.revealedValue), "no assertion in the error")
            }
            let sent = await provider.requestCount(.token)
            for bad in ["", "not-a-jwt", "a.b", "a.b.c.d", "é.b.c", String(repeating: "a", count: 70_000) + ".b.c"] {
                let refused = await #expect(throws: OIDCError.self) { try await client.jwtBearer(assertion: Secret(bad)) }
                #expect(refused?.code == .invalidArgument)
            }
            let twice = await #expect(throws: OIDCError.self) {
                try await client.jwtBearer(assertion: try Self.assertion(key, audience: provider.issuer), parameters: [OAuthParameter("assertion", "x.y.z")])
            }
            #expect(twice?.code == .invalidArgument)
            #expect(await provider.requestCount(.token) == sent, "nothing sent")
        }
    }

    @Test("a JWT bearer session presents the assertion as it is now whenever new tokens are needed, once for 10 callers")
    func session() async throws {
        let key = try TestSigningKey.generate(.es256)
        try await withTestProvider(try Self.configuration(key)) { provider in
            let rp = try await provider.relyingParty(client: ServiceGrantsTests.daemon)
            let presented = PresentedAssertions()
            let audience = provider.issuer
            let session = rp.jwtBearerSession(scopes: ["reports.read"], allowlist: .default(for: provider.protectedResource)) {
                () async throws(OIDCError) -> Secret in
                let run = await presented.count
                guard let jwt = try? Self.assertion(key, subject: "run-\(run)", audience: audience) else { throw OIDCError(.invalidArgument, "could not sign") }
                return await presented.add(jwt)
            }
            #expect(session.key.service == "jwt-bearer")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 { group.addTask { try await session.send(HTTPRequest(url: provider.protectedResource)).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 10))
            let firstCount = await presented.count
            #expect(await provider.grantCount(GrantType.jwtBearer.rawValue) == 1 && firstCount == 1)
            await provider.expireAccessTokens()
            let answer = try await session.send(HTTPRequest(url: provider.protectedResource))
            #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains("\"sub\":\"run-1\""), "the rotated assertion")
            let secondCount = await presented.count
            #expect(await provider.grantCount(GrantType.jwtBearer.rawValue) == 2 && secondCount == 2)
            let sent = try #require(await provider.tokenRequestParameters().last)
            let last = await presented.last
            #expect(sent["assertion"] == last?.revealedValue)
            let stored = try await session.validTokens()
            #expect(stored.refreshToken == nil)
            #expect(await provider.grantCount("refresh_token") == 0)
        }
    }
}

/// The assertions a session asked for, in order.
private actor PresentedAssertions {
    private(set) var all: [Secret] = []
    func add(_ assertion: Secret) -> Secret {
        all.append(assertion)
        return assertion
    }
    var count: Int { all.count }
    var last: Secret? { all.last }
}
