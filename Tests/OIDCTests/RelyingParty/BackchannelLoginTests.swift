import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Backchannel logins (OpenID CIBA Core 1.0, poll mode) against TestProvider over loopback HTTP,
/// the wait on a clock the test moves.
@Suite("Backchannel login (CIBA)", .timeLimit(.scaledMinutes(1)))
struct BackchannelLoginTests {
    static let bank = TestProvider.Client.confidential(id: "bank-app", secret: "bank-app-secret-0123456789abcdefgh")

    static func provider(enforcesInterval: Bool = false) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: [.default, bank])
        configuration.ciba = TestProvider.CIBA(expiresIn: 120, interval: 5, enforcesInterval: enforcesInterval)
        return configuration
    }

    @Test("approved on the user's device: the request carries the hint, binding message and openid; the ID token is verified; the login names the user")
    func approved() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty(client: Self.bank)
            #expect(rp.provider.backchannelAuthenticationEndpoint?.absoluteString == provider.backchannelAuthenticationEndpoint)
            let subject = await provider.user.subject
            var login = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject, bindingMessage: "W4SCT", scopes: ["profile"]))
            #expect(!"\(login.authentication)".contains(login.authentication.requestID.revealedValue), "the auth_req_id never printed")
            let pending = try #require(await provider.pendingBackchannelLogins().first)
            #expect(pending.bindingMessage == "W4SCT" && pending.scope == "openid profile" && pending.loginHint == subject)
            let time = ManualLoginClock()
            login.clock = time.clock
            let started = login
            let waiting = Task { try await started.waitForLogin() }
            await time.sleepsStarted(1)
            time.advance(by: 6)
            await time.sleepsStarted(2)
            #expect(await provider.approveBackchannelLogin(loginHint: subject))
            time.advance(by: 6)
            let kept = try await waiting.value
            #expect(kept.subject == subject && kept.idToken?.claims.subject == subject && kept.grant?.type == .ciba)
            let polls = await provider.tokenRequestParameters().filter { $0["grant_type"] == "urn:openid:params:grant-type:ciba" }
            #expect(polls.count == 2 && polls.allSatisfy { $0["auth_req_id"] == pending.requestID })
        }
    }

    @Test("access_denied and the provider's expired_token are provider errors naming which; slow_down adds 5 s to the rest of the wait")
    func refusals() async throws {
        try await withTestProvider(Self.provider(enforcesInterval: true)) { provider in
            let rp = try await provider.relyingParty(client: Self.bank)
            let subject = await provider.user.subject
            var login = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject))
            let time = ManualLoginClock()
            login.clock = time.clock
            let intervals = IntervalLog()
            login.onProgress = { if case .slowDown(let interval) = $0 { intervals.add(interval) } }
            let started = login
            let waiting = Task { try await started.waitForLogin() }
            // The first poll: pending; the second, sooner than the interval by the provider's clock
            // (the login's clock moved, the provider's did not): slow_down.
            await time.sleepsStarted(1)
            time.advance(by: 6)
            await time.sleepsStarted(2)
            time.advance(by: 6)
            await time.sleepsStarted(3)
            #expect(intervals.all == [.seconds(10)])
            #expect(await provider.denyBackchannelLogin(loginHint: subject))
            // The provider's clock moves past the longer interval too: this poll is in time.
            await provider.advanceClock(by: 11)
            time.advance(by: 12)
            let denied = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(denied?.code == .providerError && denied?.providerError?.error == "access_denied", "\(String(describing: denied))")

            var second = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject))
            let later = ManualLoginClock()
            second.clock = later.clock
            let started2 = second
            let waiting2 = Task { try await started2.waitForLogin() }
            await later.sleepsStarted(1)
            await provider.advanceClock(by: 200)
            later.advance(by: 6)
            let expired = await #expect(throws: OIDCError.self) { try await waiting2.value }
            #expect(expired?.code == .providerError && expired?.providerError?.error == "expired_token", "\(String(describing: expired))")
        }
    }

    @Test("ping: the notification's bearer token and auth_req_id checked; an early one finds the login pending; after the approval, one token request")
    func ping() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty(client: Self.bank)
            let subject = await provider.user.subject
            let token = try BackchannelAuthenticationRequest.newNotificationToken()
            let login = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject, clientNotificationToken: token))
            let pending = try #require(await provider.pendingBackchannelLogins().first)
            #expect(pending.clientNotificationToken == token.revealedValue)
            let body = Array(#"{"auth_req_id":"\#(pending.requestID)"}"#.utf8)
            #expect(login.check(notificationAuthorization: nil, body: body) == .unauthorized)
            #expect(login.check(notificationAuthorization: "Bearer wrong", body: body) == .unauthorized)
            #expect(login.check(notificationAuthorization: "Basic \(token.revealedValue)", body: body) == .unauthorized)
            #expect(login.check(notificationAuthorization: "Bearer \(token.revealedValue)", body: Array(#"{"auth_req_id":"x"}"#.utf8)) == .badRequest)
            #expect(login.check(notificationAuthorization: "Bearer \(token.revealedValue)", body: Array("[]".utf8)) == .badRequest)
            #expect(login.check(notificationAuthorization: "bearer \(token.revealedValue)", body: body) == .accepted)
            let early = await #expect(throws: OIDCError.self) { try await login.completeAfterNotification() }
            #expect(early?.providerError?.error == "authorization_pending")
            #expect(await provider.approveBackchannelLogin(loginHint: subject))
            let kept = try await login.completeAfterNotification()
            #expect(kept.subject == subject && kept.grant?.type == .ciba)
            #expect(await provider.grantCount("urn:openid:params:grant-type:ciba") == 2)
            let poll = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject))
            #expect(poll.check(notificationAuthorization: "Bearer \(token.revealedValue)", body: body) == .unauthorized, "a poll-mode login accepts none")
        }
    }

    @Test("a relying party that signs its requests sends a signed authentication request (CIBA Core §7.1.1): only request, its claims the parameters; a request signed by another key is refused")
    func signedRequest() async throws {
        let key = try JWSSigningKey.generate(.es256, keyID: "ciba-key")
        let bank = TestProvider.Client.privateKeyJWT(id: "signing-bank", keys: [key])
        var configuration = Self.provider()
        configuration.clients.append(bank)
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(
                client: bank, authentication: .privateKeyJWT(key), configuration: RelyingParty.Configuration(frontChannel: .signed(key)))
            let subject = await provider.user.subject
            _ = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject, bindingMessage: "SIGNED", scopes: ["profile"]))
            let sent = try #require(await provider.requestParameters(.backchannelAuthentication).last)
            #expect(sent["request"] != nil && sent["login_hint"] == nil && sent["binding_message"] == nil && sent["scope"] == nil, "\(sent.keys.sorted())")
            let jwt = try UnverifiedJWT(try #require(sent["request"]))
            #expect(jwt.claims["iss"]?.stringValue == "signing-bank" && jwt.claims["aud"]?.stringValue == provider.issuer && jwt.claims["jti"] != nil)
            let pending = try #require(await provider.pendingBackchannelLogins().first)
            #expect(pending.bindingMessage == "SIGNED" && pending.loginHint == subject && pending.scope == "openid profile")

            let other = try JWSSigningKey.generate(.es256, keyID: "ciba-key")
            let forged = try await provider.relyingParty(client: bank, authentication: .privateKeyJWT(key), configuration: RelyingParty.Configuration(frontChannel: .signed(other)))
            let refused = await #expect(throws: OIDCError.self) { try await forged.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject)) }
            #expect(refused?.providerError?.error == "invalid_request_object", "\(String(describing: refused))")
        }
    }

    @Test("a timeout that ends inside a wait ends the login there, with no poll sooner than the interval")
    func noEarlyLastPoll() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty(client: Self.bank)
            let subject = await provider.user.subject
            var login = try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: subject))
            let time = ManualLoginClock()
            login.clock = time.clock
            login.timeout = .seconds(8)
            let started = login
            let waiting = Task { try await started.waitForLogin() }
            await time.sleepsStarted(1)
            time.advance(by: 6)
            await time.sleepsStarted(2)
            time.advance(by: 3)
            let ended = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(ended?.code == .loginTimedOut, "\(String(describing: ended))")
            #expect(await provider.grantCount("urn:openid:params:grant-type:ciba") == 1, "one poll at 6 s; none at 8 s, 2 s after it")
        }
    }

    @Test("refused before sending: a binding message or hint with control characters, a public client; the provider's unknown_user_id")
    func badInput() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty(client: Self.bank)
            for request in [
                BackchannelAuthenticationRequest(loginHint: "alice", bindingMessage: "pay\u{1B}[2J"),
                BackchannelAuthenticationRequest(loginHint: "alice\nbob"),
                BackchannelAuthenticationRequest(loginHint: ""),
                BackchannelAuthenticationRequest(loginHint: "alice", bindingMessage: String(repeating: "x", count: 300)),
                BackchannelAuthenticationRequest(loginHint: "alice", parameters: [OAuthParameter("login_hint", "bob")]),
            ] {
                let refused = await #expect(throws: OIDCError.self) { try await rp.backchannelLogin(request) }
                #expect(refused?.code == .invalidArgument, "\(String(describing: refused))")
            }
            let publicClient = try await provider.relyingParty()
            let refused = await #expect(throws: OIDCError.self) { try await publicClient.backchannelLogin(BackchannelAuthenticationRequest(loginHint: "alice")) }
            #expect(refused?.code == .invalidArgument)
            #expect(await provider.requestCount(.backchannelAuthentication) == 0)
            let unknown = await #expect(throws: OIDCError.self) { try await rp.backchannelLogin(BackchannelAuthenticationRequest(loginHint: "mallory")) }
            #expect(unknown?.providerError?.error == "unknown_user_id")
        }
    }

    @Test("the answer, bounded: no auth_req_id refused, an interval of 0 taken as 5 s, an absurd expires_in cut to a day, an interval over an hour refused")
    func answerBounds() throws {
        let now = Date()
        #expect(throws: OIDCError.self) { try BackchannelAuthentication(json: Array(#"{"expires_in":120}"#.utf8), receivedAt: now, scopes: []) }
        #expect(throws: OIDCError.self) { try BackchannelAuthentication(json: Array(#"{"auth_req_id":"a","expires_in":0}"#.utf8), receivedAt: now, scopes: []) }
        #expect(throws: OIDCError.self) {
            try BackchannelAuthentication(json: Array(#"{"auth_req_id":"a","expires_in":60,"interval":7200}"#.utf8), receivedAt: now, scopes: [])
        }
        // Not a number of seconds at all (past any date): malformed.
        #expect(throws: OIDCError.self) { try BackchannelAuthentication(json: Array(#"{"auth_req_id":"a","expires_in":1e300}"#.utf8), receivedAt: now, scopes: []) }
        let zero = try BackchannelAuthentication(json: Array(#"{"auth_req_id":"a","expires_in":1e9,"interval":0}"#.utf8), receivedAt: now, scopes: [])
        #expect(zero.interval == .seconds(5) && zero.expiresAt == now.addingTimeInterval(86_400))
    }
}

/// The intervals a login's progress named, in order.
private final class IntervalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var intervals: [Duration] = []
    func add(_ interval: Duration) { lock.withLock { intervals.append(interval) } }
    var all: [Duration] { lock.withLock { intervals } }
}
