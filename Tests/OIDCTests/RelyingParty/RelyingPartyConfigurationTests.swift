import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The relying party's settings as one value given at creation (`RelyingParty.Configuration`), the
/// security profile as a policy carried into its sessions, the front channel as a strategy, and the
/// login flows' injected clock, over real loopback HTTP against TestProvider.
@Suite("The relying party's configuration, policy and front channel", .timeLimit(.scaledMinutes(1)))
struct RelyingPartyConfigurationTests {
    static let key = TokenStoreKey(service: "oidc", account: "test-client")

    /// `provider`'s relying party (by discovery, as ``TestProvider/relyingParty(client:authentication:transport:logger:)``
    /// makes it) with `configuration`.
    static func relyingParty(_ provider: TestProvider, _ configuration: RelyingParty.Configuration) async throws -> RelyingParty {
        let made = try await provider.relyingParty()
        return RelyingParty(tokenClient: made.tokenClient, keys: made.keys, configuration: configuration)
    }

    @Test("A FAPI 2.0 session refuses a refreshed ID token signed with RS256: the session carries the profile in its options, and keeps the login's own")
    func fapi2SessionRefusesRS256() async throws {
        try await withTestProvider { provider in
            let rp = try await Self.relyingParty(provider, RelyingParty.Configuration(securityProfile: .fapi2))
            let store = InMemoryTokenStore()
            var tokens = try await provider.issueTokens()
            tokens.expiresAt = Date().addingTimeInterval(-10)
            try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", key: Self.key)
            let session = rp.session(store: store, key: Self.key, allowlist: HostAllowlist([]))
            #expect(await session.options.securityProfile == .fapi2)
            let refreshed = try await session.validTokens()
            #expect(refreshed.accessToken != tokens.accessToken)
            #expect(refreshed.idToken == tokens.idToken, "the RS256 ID token replaced the login's own")
            var events = session.events.makeAsyncIterator()
            #expect(await events.next() == .tokensRefreshed)
            var refused: OIDCError?
            if case .refreshedIDTokenRejected(let error) = await events.next() { refused = error }
            #expect(refused?.code == .algorithmNotAllowed)
        }
    }

    @Test("a session made from the parts with Options(securityProfile: .fapi2) holds refreshed ID tokens to it too")
    func sessionFromPartsCarriesThePolicy() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let store = InMemoryTokenStore()
            var tokens = try await provider.issueTokens()
            tokens.expiresAt = Date().addingTimeInterval(-10)
            try await store.inject(tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", key: Self.key)
            let options = AuthenticatedSession.Options(refreshedIDTokenKeys: rp.keys, securityProfile: .fapi2)
            let session = AuthenticatedSession(
                store: store, key: Self.key, source: .refreshToken(rp.tokenClient), transport: rp.transport, allowlist: HostAllowlist([]),
                options: options)
            let refreshed = try await session.validTokens()
            #expect(refreshed.accessToken != tokens.accessToken && refreshed.idToken == tokens.idToken)
        }
    }

    @Test("the .none profile does nothing: no rule, no narrowing; FAPI 2.0's algorithms are PS256, ES256 and EdDSA, Ed25519 by either name")
    func policyRows() throws {
        let provider = ProviderConfiguration(issuer: "https://id.example", authorizationEndpoint: URL(string: "https://id.example/authorize"))
        let rp = RelyingParty(provider: provider, clientID: "c", clientSecret: Secret("s"))
        try SecurityProfile.none.validate(rp)
        #expect(throws: OIDCError.self) { try SecurityProfile.fapi2.validate(rp) }
        var verifier = IDTokenVerifier(issuer: "https://id.example", clientID: "c", nonce: .notChecked)
        let all = verifier.allowedAlgorithms
        SecurityProfile.none.constrain(&verifier)
        #expect(verifier.allowedAlgorithms == all)
        SecurityProfile.fapi2.constrain(&verifier)
        #expect(verifier.allowedAlgorithms == [.ps256, .es256, .edDSA, .ed25519])
        #expect(SecurityProfile.fapi2.signatureAlgorithms == [.ps256, .es256, .edDSA, .ed25519])
        var jarm = JARMVerifier(issuer: "https://id.example", clientID: "c", allowedAlgorithms: [.rs256, .es256])
        SecurityProfile.fapi2.constrain(&jarm)
        #expect(jarm.allowedAlgorithms == [.es256])
        #expect(SecurityProfile(rawValue: "fapi2") == .fapi2 && SecurityProfile(rawValue: "fapi3") == nil)
        #expect(SecurityProfile.allCases.map(\.rawValue) == ["none", "fapi2"])
    }

    @Test("the configuration is given at creation, with today's defaults; the deprecated setters forward into it")
    func configurationAtCreation() async throws {
        try await withTestProvider { provider in
            let plain = try await provider.relyingParty()
            #expect(plain.configuration.dpop == .off && plain.configuration.securityProfile == .none && plain.configuration.responseMode == nil)
            #expect(plain.configuration.frontChannel.pushedAuthorization == .whenRequired && plain.configuration.frontChannel.requestObjectKey == nil)
            let rp = try await Self.relyingParty(provider, RelyingParty.Configuration(frontChannel: .pushed, dpop: .on))
            #expect(rp.pushesAuthorizationRequests && !plain.pushesAuthorizationRequests)
            let request = try rp.authorizationRequest(redirectURI: "http://127.0.0.1:9/callback")
            #expect(request.dpopKey != nil)
            var old = plain
            old.dpop = .on
            #expect(old.configuration.dpop == .on && plain.configuration.dpop == .off)
        }
    }

    @Test("the front channel as a public strategy: the target of a pushed request carries only client_id and request_uri, and says when it expires")
    func frontChannelTarget() async throws {
        var configuration = TestProvider.Configuration()
        configuration.pushedAuthorizationRequests = .offered
        try await withTestProvider(configuration) { provider in
            let rp = try await Self.relyingParty(provider, RelyingParty.Configuration(frontChannel: .pushed))
            let request = try rp.authorizationRequest(redirectURI: "http://127.0.0.1:9/callback")
            let before = Date()
            let target = try await rp.configuration.frontChannel.target(for: request, at: rp)
            let query = try #require(URLComponents(url: target.url, resolvingAgainstBaseURL: false)?.queryItems)
            #expect(Set(query.map(\.name)) == ["client_id", "request_uri"])
            let expiresAt = try #require(target.expiresAt)
            #expect(expiresAt > before && expiresAt <= Date().addingTimeInterval(61))
            let plain = try await FrontChannel.plain.target(for: request, at: rp)
            let url = try request.url()
            #expect(plain.expiresAt == nil && plain.url == url)
        }
    }

    @Test("save(_:in:as:) saves under the store's lock and returns the stored login; session(…) makes the session over it")
    func saveThenSession() async throws {
        try await withTestProvider { provider in
            let rp = try await provider.relyingParty()
            let store = InMemoryTokenStore()
            let tokens = try await provider.issueTokens()
            let login = StoredLogin(tokens: tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", provider: rp.provider)
            let stored = try await rp.save(login, in: store, as: Self.key)
            #expect(try await store.load(Self.key)?.tokens.accessToken == stored.tokens.accessToken)
            let session = rp.session(store: store, key: Self.key, allowlist: HostAllowlist([]))
            #expect(try await session.validTokens().accessToken == tokens.accessToken)
        }
    }

    @Test("DeviceLogin.timeout on the injected clock: nobody approves, the clock is moved past the timeout, the wait ends with loginTimedOut")
    func deviceTimeout() async throws {
        var configuration = TestProvider.Configuration()
        configuration.deviceFlow = .init(expiresIn: 600, interval: 5, enforcesInterval: false)
        try await withTestProvider(configuration) { provider in
            var login = try await provider.relyingParty().deviceLogin()
            let time = ManualLoginClock()
            login.clock = time.clock
            login.timeout = .seconds(30)
            let mover = Task {
                await time.sleepsStarted(1)
                time.advance(by: 31)
            }
            let error = await #expect(throws: OIDCError.self) { try await login.waitForLogin() }
            await mover.value
            #expect(error?.code == .loginTimedOut && error?.message.contains("DeviceLogin.timeout") == true)
            #expect(await provider.devicePollTimes().isEmpty)  // the deadline passed before the first poll
        }
    }
}
