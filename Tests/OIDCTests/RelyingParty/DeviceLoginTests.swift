import Foundation
@testable import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// The device authorization grant (RFC 8628) against TestProvider over loopback HTTP: the codes,
/// the polls and their waits, every way a wait ends.
@Suite("Device login", .timeLimit(.scaledMinutes(2)))
struct DeviceLoginTests {
    static func provider(interval: Int? = 1, expiresIn: Int = 60, enforcesInterval: Bool = false) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.deviceFlow = .init(expiresIn: expiresIn, interval: interval, enforcesInterval: enforcesInterval)
        return configuration
    }

    @Test("the codes, PKCE S256 sent, the user approves on the verification page in a browser; the ID token verified")
    func approvedInABrowser() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty()
            let login = try await rp.deviceLogin(scopes: ["offline_access"])
            #expect(login.userCode.count == 9 && login.userCode.contains("-"))
            #expect(login.verificationURI.absoluteString == provider.deviceVerificationURI)
            #expect(login.verificationURIComplete?.query == "user_code=\(login.userCode)")
            #expect(login.interval == .seconds(1))
            #expect(abs(login.expiresAt.timeIntervalSinceNow - 60) < 5)
            #expect(await provider.devicePollTimes().isEmpty)  // nothing polled before the wait starts
            Task { _ = try await TestBrowser().open(try #require(login.verificationURIComplete)) }
            let verified = try await login.waitForLogin()
            #expect(verified.idToken?.claims.subject == "test-user" && verified.tokens.refreshToken != nil)
            let poll = try #require(await provider.tokenRequestParameters().last)
            #expect(poll["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code")
            #expect(poll["code_verifier"] != nil)  // the provider names S256: PKCE was sent
            #expect(await provider.grantCount("urn:ietf:params:oauth:grant-type:device_code") >= 1)
        }
    }

    @Test("a provider that enforces the interval never has to say slow_down: every poll waits at least the interval")
    func pollsKeepTheInterval() async throws {
        try await withTestProvider(Self.provider(enforcesInterval: true)) { provider in
            var login = try await provider.relyingParty().deviceLogin()
            let seen = Recorded()
            login.onProgress = { if case .slowDown(let interval) = $0 { seen.add(interval) } }
            let userCode = login.userCode
            Task {
                // Approved after the third poll: the polls before it show the waits.
                try await provider.waitForRequests(.token, count: 3, grantType: "urn:ietf:params:oauth:grant-type:device_code")
                await provider.approveDeviceLogin(userCode: userCode)
            }
            _ = try await login.waitForLogin()
            let times = await provider.devicePollTimes()
            #expect(times.count >= 3 && seen.values.isEmpty, "\(times.count) polls, slow_down \(seen.values)")
            for (earlier, later) in zip(times, times.dropFirst()) { #expect(later.timeIntervalSince(earlier) >= 1) }
        }
    }

    @Test("slow_down adds 5 s to this and every later poll: the provider's poll times show it")
    func slowDownMeasured() async throws {
        try await withTestProvider(Self.provider()) { provider in
            await provider.scriptDevicePolls([.slowDown(), .slowDown(), .approve])
            var login = try await provider.relyingParty().deviceLogin()
            let seen = Recorded()
            login.onProgress = { if case .slowDown(let interval) = $0 { seen.add(interval) } }
            _ = try await login.waitForLogin()
            let times = await provider.devicePollTimes()
            try #require(times.count == 3)
            let first = times[1].timeIntervalSince(times[0]), second = times[2].timeIntervalSince(times[1])
            // Lower bounds only (a loaded machine makes waits longer, never shorter), each from its own
            // poll: a late first poll does not move the second's (it was "first + 4.5 s", and failed
            // on 2 busy cores with 7.3 s then 12.1 s).
            #expect(first >= 1 + 5, "\(first)")
            #expect(second >= 1 + 5 + 5, "\(second) after \(first)")
            #expect(seen.values == [.seconds(6), .seconds(11)])
        }
    }

    @Test("a slow_down that names the same interval still adds 5 s (RFC 8628 §3.5); one that names a longer one is waited for")
    func slowDownWithInterval() async throws {
        try await withTestProvider(Self.provider()) { provider in
            // The same interval named: 1 + 5 s. A longer one than that: as named.
            for (named, waited) in [(1, 6), (9, 9)] {
                await provider.scriptDevicePolls([.slowDown(interval: named), .approve])
                var login = try await provider.relyingParty().deviceLogin()
                let seen = Recorded()
                login.onProgress = { if case .slowDown(let interval) = $0 { seen.add(interval) } }
                _ = try await login.waitForLogin()
                let times = await provider.devicePollTimes().suffix(2)
                try #require(times.count == 2)
                #expect(times.last!.timeIntervalSince(times.first!) >= Double(waited), "\(times.last!.timeIntervalSince(times.first!))")
                #expect(seen.values == [.seconds(waited)])
            }
        }
    }

    @Test("Retry-After on a pending answer, and on 503s beyond three, is waited for: the provider's poll times show it")
    func retryAfterHonoured() async throws {
        try await withTestProvider(Self.provider()) { provider in
            await provider.scriptDevicePolls([.pending(retryAfter: 4), .approve])
            _ = try await provider.relyingParty().deviceLogin().waitForLogin()
            let times = await provider.devicePollTimes()
            try #require(times.count == 2)
            #expect(times[1].timeIntervalSince(times[0]) >= 4, "\(times[1].timeIntervalSince(times[0]))")
            // Four 503s with Retry-After: 1, more than the three tries without it: still approved.
            await provider.failNextTokenRequests(4, with: .serviceUnavailable)
            await provider.scriptDevicePolls([.approve])
            _ = try await provider.relyingParty().deviceLogin().waitForLogin()
        }
    }

    @Test("Retry-After in seconds or as an HTTP date; anything else is no Retry-After")
    func retryAfterForms() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(RetryAfter.duration("7", now: now) == .seconds(7))
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(RetryAfter.duration(date, now: Date(timeIntervalSince1970: 784_111_767)) == .seconds(10))
        #expect(RetryAfter.duration(date, now: Date(timeIntervalSince1970: 784_111_787)) == .zero)
        #expect(RetryAfter.duration("soon", now: now) == nil && RetryAfter.duration("-3", now: now) == nil)
        #expect(RetryAfter.duration("999999", now: now) == .seconds(3600))
    }

    @Test("pending waits; access_denied ends the wait (a provider error); expired_token ends it as timed out")
    func deniedAndExpired() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty()
            await provider.scriptDevicePolls([.pending(), .deny])
            let denied = await #expect(throws: OIDCError.self) { try await rp.deviceLogin().waitForLogin() }
            #expect(denied?.code == .providerError && denied?.providerError?.error == "access_denied")
            await provider.scriptDevicePolls([.pending(), .expire])
            let expired = await #expect(throws: OIDCError.self) { try await rp.deviceLogin().waitForLogin() }
            #expect(expired?.code == .loginTimedOut && expired?.providerError?.error == "expired_token")
        }
    }

    @Test("an error the grant does not define (invalid_grant) ends the wait at once, as a provider error")
    func unknownErrorEnds() async throws {
        try await withTestProvider(Self.provider()) { provider in
            await provider.failNextTokenRequests(1, with: .oauthError("invalid_grant", status: 400))
            let error = await #expect(throws: OIDCError.self) { try await provider.relyingParty().deviceLogin().waitForLogin() }
            #expect(error?.code == .providerError && error?.providerError?.error == "invalid_grant")
            // At once: the one poll the fault answered, and no other (not a bound on time, which a loaded machine stretches).
            #expect(await provider.requestCount(.token) == 1)
            #expect(await provider.devicePollTimes().isEmpty)  // the fault answered; the provider never polled
        }
    }

    @Test("no PKCE on the device request when the provider does not name S256; the login still completes")
    func noPKCEWithoutS256() async throws {
        try await withTestProvider(Self.provider()) { provider in
            var configuration = provider.providerConfiguration
            configuration.codeChallengeMethodsSupported = []
            let rp = RelyingParty(provider: configuration, clientID: "test-client")
            let login = try await rp.deviceLogin()
            let sent = try #require(await provider.requestParameters(.deviceAuthorization).last)
            #expect(sent["code_challenge"] == nil && sent["code_challenge_method"] == nil)
            await provider.scriptDevicePolls([.approve])
            _ = try await login.waitForLogin()
            #expect(await provider.tokenRequestParameters().last?["code_verifier"] == nil)
        }
    }

    @Test("an ID token that fails its checks (issued by a clock two hours ahead) ends the login: nothing is returned")
    func idTokenChecked() async throws {
        var configuration = Self.provider()
        configuration.clockOffset = 7200
        try await withTestProvider(configuration) { provider in
            await provider.scriptDevicePolls([.approve])
            let error = await #expect(throws: OIDCError.self) { try await provider.relyingParty().deviceLogin().waitForLogin() }
            #expect(error?.category == .security || error?.category == .provider, "\(String(describing: error))")
            #expect(error?.context["claim"] == "iat", "\(String(describing: error))")
        }
    }

    @Test("a provider that never says expired_token: the wait ends by this clock once expires_in has passed, with no poll after it (a clock the test moves)")
    func expiryByOwnClock() async throws {
        try await withTestProvider(Self.provider(expiresIn: 600)) { provider in
            var login = try await provider.relyingParty().deviceLogin()
            let time = ManualLoginClock()
            login.clock = time.clock
            let started = login
            let waiting = Task { try await started.waitForLogin() }
            // Half the codes' life: one poll (pending), and the wait goes on.
            await time.sleepsStarted(1)
            time.advance(by: 300)
            await time.sleepsStarted(2)
            #expect(await provider.devicePollTimes().count == 1)
            // Past expires_in: the wait ends at once, by this clock, without polling again.
            time.advance(by: 301)
            let error = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(error?.code == .loginTimedOut && error?.message.contains("run the login again") == true, "\(String(describing: error))")
            #expect(await provider.devicePollTimes().count == 1)
        }
    }

    @Test("slow_down after slow_down until expiry: the error names a clock that runs fast")
    func driftNamed() async throws {
        try await withTestProvider(Self.provider(expiresIn: 600)) { provider in
            await provider.scriptDevicePolls([.slowDown(interval: 1), .slowDown(interval: 1), .slowDown(interval: 1)])
            var login = try await provider.relyingParty().deviceLogin()
            let time = ManualLoginClock()
            login.clock = time.clock
            let started = login
            let waiting = Task { try await started.waitForLogin() }
            // Three polls, each after the interval and its margin, each answered slow_down (which adds
            // 5 s, RFC 8628 §3.5: 1 + 1 s, then 6 + 1 s, then 11 + 1.1 s); then expiry.
            for (sleep, seconds) in [(1, 2.0), (2, 7.0), (3, 13.0)] {
                await time.sleepsStarted(sleep)
                time.advance(by: seconds)
            }
            await time.sleepsStarted(4)
            #expect(await provider.devicePollTimes().count == 3)
            time.advance(by: 600)
            let error = await #expect(throws: OIDCError.self) { try await waiting.value }
            #expect(error?.code == .loginTimedOut && error?.message.contains("clock may run fast") == true, "\(String(describing: error))")
        }
    }

    @Test("a poll that meets a 503 is tried again; three 502s in a row without Retry-After end the wait as unavailable")
    func transientPolls() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let rp = try await provider.relyingParty()
            await provider.failNextTokenRequests(1, with: .serviceUnavailable)
            await provider.scriptDevicePolls([.approve])
            _ = try await rp.deviceLogin().waitForLogin()
            await provider.failNextTokenRequests(3, with: .htmlError(status: 502))
            let error = await #expect(throws: OIDCError.self) { try await rp.deviceLogin().waitForLogin() }
            #expect(error?.category == .transient)
        }
    }

    @Test("the answer is read leniently: no interval is 5 s, numbers as strings, Google's verification_url; an interval of 0 or less is refused")
    func lenientParsing() throws {
        let now = Date()
        let google = try DeviceAuthorization(
            answer: Array(#"{"device_code":"d","user_code":"U","verification_url":"https://www.google.com/device","expires_in":"1800"}"#.utf8),
            receivedAt: now
        )
        #expect(google.interval == .seconds(5) && google.verificationURI.host == "www.google.com")
        #expect(google.expiresAt == now.addingTimeInterval(1800))
        let strings = try DeviceAuthorization(
            answer: Array(#"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d","expires_in":600,"interval":"7"}"#.utf8),
            receivedAt: now
        )
        #expect(strings.interval == .seconds(7))
        for bad in [
            #"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d","expires_in":600,"interval":0}"#,
            #"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d","expires_in":600,"interval":-5}"#,
            #"{"user_code":"U","verification_uri":"https://idp.example/d","expires_in":600}"#,
            #"{"device_code":"d","user_code":"U","expires_in":600}"#,
            #"{"device_code":"d","user_code":"U","verification_uri":"http://idp.example/d","expires_in":600}"#,
            #"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d"}"#,
            #"{"device_code":"d","user_code":"U\u001b[2J","verification_uri":"https://idp.example/d","expires_in":600}"#,
            #"{"device_code":"d","user_code":"WDJB\u202eTHJM","verification_uri":"https://idp.example/d","expires_in":600}"#,
            #"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d\u001b[2J","expires_in":600}"#,
        ] {
            let error = #expect(throws: OIDCError.self, "\(bad)") { try DeviceAuthorization(answer: Array(bad.utf8), receivedAt: now) }
            #expect(error?.code == .malformedResponse)
        }
        let zero = #expect(throws: OIDCError.self) {
            try DeviceAuthorization(
                answer: Array(#"{"device_code":"d","user_code":"U","verification_uri":"https://idp.example/d","expires_in":600,"interval":0}"#.utf8),
                receivedAt: now)
        }
        #expect(zero?.message.contains("positive number of seconds") == true)
    }

    @Test("a device grant that sends no ID token (django-oauth-toolkit 3.4): waitForLogin keeps the login without a subject; it is kept, used and refreshed")
    func noIDToken() async throws {
        var configuration = Self.provider()
        configuration.deviceFlow.issuesIDTokens = false
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty()
            let login = try await rp.deviceLogin()
            #expect(await provider.approveDeviceLogin(userCode: login.userCode))
            let stored = try await login.waitForLogin()
            #expect(stored.tokens.idToken == nil && stored.subject == nil)
            #expect(stored.tokens.scopes.contains("openid") && stored.tokens.refreshToken != nil)
            #expect(stored.issuer == provider.issuer && stored.clientID == "test-client" && stored.provider == rp.provider)

            let store = InMemoryTokenStore()
            let key = TokenStoreKey(service: "device", account: "tv")
            let session = try await rp.keep(stored, in: store, as: key, allowlist: .default(for: provider.protectedResource))
            let answer = try await session.send(HTTPRequest(method: "GET", url: provider.protectedResource))
            #expect(answer.status == 200)
            let before = stored.tokens.accessToken.revealedValue
            let refreshed = try await session.refreshNow()
            #expect(refreshed.accessToken.revealedValue != before)
            let kept = try #require(await store.load(key))
            #expect(kept.tokens.accessToken == refreshed.accessToken && kept.subject == nil)
        }
    }

    @Test("waitForLogin with an ID token: verified, its subject kept; waitForTokens without one says so (not 'openid' missing)")
    func waitForLoginVerifies() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let login = try await provider.relyingParty().deviceLogin()
            #expect(await provider.approveDeviceLogin(userCode: login.userCode))
            let stored = try await login.waitForLogin()
            #expect(stored.subject == "test-user" && stored.tokens.idToken != nil)
            #expect(stored.idToken?.claims.subject == "test-user" && stored.idToken?.token == stored.tokens.idToken)
        }
        var configuration = Self.provider()
        configuration.deviceFlow.issuesIDTokens = false
        try await withTestProvider(configuration) { provider in
            let login = try await provider.relyingParty().deviceLogin(scopes: ["openid"])
            #expect(await provider.approveDeviceLogin(userCode: login.userCode))
            // The deprecated VerifiedLogin spelling, kept for callers: it has no login without an ID token.
            let error = await #expect(throws: OIDCError.self) { try await login.waitForTokens() }
            #expect(error?.code == .missingParameter)
            #expect(error?.message.contains("device grant sent no ID token") == true, "\(String(describing: error))")
            #expect(error?.message.contains("needs the 'openid' scope") == false)
        }
    }

    @Test("an ID token that does come from a device grant is verified: one from a clock two hours ahead fails waitForLogin too")
    func waitForLoginChecksTheIDToken() async throws {
        var configuration = Self.provider()
        configuration.clockOffset = 7200
        try await withTestProvider(configuration) { provider in
            await provider.scriptDevicePolls([.approve])
            let error = await #expect(throws: OIDCError.self) { try await provider.relyingParty().deviceLogin().waitForLogin() }
            #expect(error?.context["claim"] == "iat", "\(String(describing: error))")
        }
    }

    @Test("a provider without a device authorization endpoint is refused before anything is sent")
    func noEndpoint() async throws {
        try await withTestProvider { provider in
            var configuration = provider.providerConfiguration
            configuration.deviceAuthorizationEndpoint = nil
            let error = await #expect(throws: OIDCError.self) { try await RelyingParty(provider: configuration, clientID: "test-client").deviceLogin() }
            #expect(error?.code == .invalidArgument && error?.message.contains("device authorization endpoint") == true)
            #expect(await provider.requestCount(.deviceAuthorization) == 0)
        }
    }
}

/// Values a callback saw, in order.
final class Recorded: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Duration] = []
    func add(_ value: Duration) { lock.withLock { seen.append(value) } }
    var values: [Duration] { lock.withLock { seen } }
}
