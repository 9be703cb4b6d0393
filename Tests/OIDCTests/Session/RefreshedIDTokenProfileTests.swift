import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Security review 4, I3: FAPI 2.0's ID-token algorithms (PS256, ES256, EdDSA; §5.4.1) hold for the ID
/// tokens that refreshes bring too, not only the one of the login.
@Suite("Refreshed ID tokens under the relying party's security profile", .timeLimit(.scaledMinutes(1)))
struct RefreshedIDTokenProfileTests {
    static let key = TokenStoreKey(service: "oidc", account: "test-client")

    /// Refreshes an expired login of `provider` through a session of a relying party with `profile`;
    /// the ID token kept and the session's events.
    static func refresh(_ provider: TestProvider, profile: SecurityProfile) async throws -> (kept: Secret?, issued: Secret?, events: [SessionEvent]) {
        var rp = try await provider.relyingParty()
        rp.securityProfile = profile
        let store = InMemoryTokenStore()
        var tokens = try await provider.issueTokens()
        tokens.expiresAt = Date().addingTimeInterval(-10)
        try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", key: key)
        let session = rp.session(store: store, key: key, allowlist: HostAllowlist([]))
        let refreshed = try await session.validTokens()
        #expect(refreshed.accessToken != tokens.accessToken)
        var events: [SessionEvent] = []
        var iterator = session.events.makeAsyncIterator()
        #expect(await iterator.next() == .tokensRefreshed)
        events.append(.tokensRefreshed)
        if refreshed.idToken == tokens.idToken, let next = await iterator.next() { events.append(next) }
        return (refreshed.idToken, tokens.idToken, events)
    }

    @Test("under .fapi2, a refreshed ID token signed with RS256 is dropped and reported; the login's own is kept")
    func rs256RefusedUnderFAPI2() async throws {
        try await withTestProvider { provider in
            let result = try await Self.refresh(provider, profile: .fapi2)
            #expect(result.kept == result.issued, "the RS256 ID token replaced the login's own")
            var refusedAlgorithm = false
            if case .refreshedIDTokenRejected(let error) = result.events.last { refusedAlgorithm = error.code == .algorithmNotAllowed }
            #expect(refusedAlgorithm, "\(result.events)")
        }
    }

    @Test("without a profile RS256 is kept; under .fapi2 an ES256 one is kept")
    func allowedAlgorithms() async throws {
        try await withTestProvider { provider in
            let result = try await Self.refresh(provider, profile: .none)
            #expect(result.kept != nil && result.kept != result.issued)
        }
        var configuration = TestProvider.Configuration()
        configuration.idTokenAlgorithm = .es256
        try await withTestProvider(configuration) { provider in
            let result = try await Self.refresh(provider, profile: .fapi2)
            #expect(result.kept != nil && result.kept != result.issued)
        }
    }
}
