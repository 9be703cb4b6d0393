import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --flow ciba` (OpenID CIBA Core 1.0), poll and ping, run as the built binary against
/// TestProvider over loopback HTTP; the test plays the user on their phone (and, in ping mode, the
/// provider's notification).
@Suite("oidc login --flow ciba", .timeLimit(.scaledMinutes(3)))
struct CIBACommandTests {
    static let grant = "urn:openid:params:grant-type:ciba"
    static let secret = "bank-app-secret-0123456789abcdefgh"
    static let bank = TestProvider.Client.confidential(id: "bank-app", secret: secret)

    static func provider(interval: Int? = 1, expiresIn: Int = 120) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: [.default, Self.bank])
        configuration.ciba = TestProvider.CIBA(expiresIn: expiresIn, interval: interval, enforcesInterval: true)
        return configuration
    }

    static func arguments(_ provider: TestProvider, _ sandbox: LoginSandbox, _ more: [String]) throws -> [String] {
        let secret = try ClientCredentialsCommandTests.privateFile(sandbox, "bank-secret", Self.secret)
        return ["login", "--flow", "ciba", "--issuer", provider.issuer, "--client-id", "bank-app", "--client-secret-file", secret] + more
    }

    /// Waits (bounded) for the backchannel request the command sent.
    static func pending(_ provider: TestProvider) async throws -> TestProvider.BackchannelRequest {
        for _ in 0..<300 {
            if let request = await provider.pendingBackchannelLogins().first { return request }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CIBATestError.noRequest
    }

    @Test("poll: the hint, binding message and scope sent; stderr names the message and the wait, never the auth_req_id; approved: stored, remembered, refreshed by oidc token")
    func pollApproved() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let subject = await provider.user.subject
            async let approval: TestProvider.BackchannelRequest = {
                let request = try await Self.pending(provider)
                // The user approves after the first pending answer.
                for _ in 0..<300 where await provider.grantCount(Self.grant) == 0 { try await Task.sleep(for: .milliseconds(50)) }
                await provider.approveBackchannelLogin(loginHint: subject)
                return request
            }()
            let login = try await sandbox.run(
                try Self.arguments(provider, sandbox, ["--login-hint", subject, "--binding-message", "Pay 12 EUR: W4SCT", "--scope", "profile", "--profile", "bank", "-vv"]))
            let request = try await approval
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.isEmpty)
            #expect(request.bindingMessage == "Pay 12 EUR: W4SCT" && request.scope == "openid profile" && request.loginHint == subject)
            #expect(login.stderr.contains("approve the sign-in to \(provider.issuer) on the device of \(subject); it shows \"Pay 12 EUR: W4SCT\". Waiting 120 s"), "\(login.stderr)")
            #expect(!login.stderr.contains(request.requestID), "the auth_req_id is never shown")
            #expect(login.stderr.contains("logged in as \(subject) at \(provider.issuer) (profile 'bank')"), "\(login.stderr)")
            let polls = await provider.tokenRequestParameters().filter { $0["grant_type"] == Self.grant }
            #expect(polls.count >= 2 && polls.allSatisfy { $0["auth_req_id"] == request.requestID })
            let stored = try #require(try sandbox.storedLogin("bank"))
            LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
            #expect(stored.subject == subject && stored.tokens.refreshToken != nil && stored.grant?.type == .ciba)
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/bank.json", encoding: .utf8)
            #expect(profile.contains(#""flow" : "ciba""#) && profile.contains(#""login_hint" : "\#(subject)""#), "\(profile)")
            #expect(!profile.contains("W4SCT"), "the binding message is not remembered")

            let status = try await sandbox.run(["status", "--profile", "bank", "--output", "json"])
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
            #expect(entry["grant_type"] as? String == Self.grant && entry["refreshable"] as? Bool == true, "\(status.stdout)")

            try ClientCredentialsCommandTests.expire(sandbox, profile: "bank")
            let token = try await sandbox.run(["token", "--profile", "bank"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            #expect(token.stdout == (try #require(try sandbox.storedLogin("bank"))).tokens.accessToken.revealedValue + "\n")
        }
    }

    @Test("poll: access_denied and the provider's expired_token exit 4 saying which; nothing stored")
    func pollRefused() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let subject = await provider.user.subject
            async let denial: Void = {
                _ = try await Self.pending(provider)
                await provider.denyBackchannelLogin(loginHint: subject)
            }()
            let denied = try await sandbox.run(try Self.arguments(provider, sandbox, ["--login-hint", subject, "--profile", "bank"]))
            try await denial
            #expect(denied.status == 4, "\(denied.stderr)")
            #expect(denied.stderr.contains("access_denied"), "\(denied.stderr)")
            #expect(try sandbox.storedLogin("bank") == nil)

            async let expiry: Void = {
                _ = try await Self.pending(provider)
                await provider.advanceClock(by: 600)
            }()
            let expired = try await sandbox.run(try Self.arguments(provider, sandbox, ["--login-hint", subject, "--profile", "bank"]))
            try await expiry
            #expect(expired.status == 4, "\(expired.stderr)")
            #expect(expired.stderr.contains("expired_token"), "\(expired.stderr)")
            #expect(try sandbox.storedLogin("bank") == nil)
        }
    }

    @Test("ping: a fresh client_notification_token; a notification with another token (401) or another auth_req_id (400) triggers nothing; the right one (204) exactly one token request")
    func ping() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let subject = await provider.user.subject
            let port = try freePort()
            let endpoint = URL(string: "http://127.0.0.1:\(port)/cb")!
            async let notifications: [Int] = {
                let request = try await Self.pending(provider)
                await provider.approveBackchannelLogin(loginHint: subject)
                let token = try #require(request.clientNotificationToken)
                let right = Array(#"{"auth_req_id":"\#(request.requestID)"}"#.utf8)
                var statuses: [Int] = []
                statuses.append(try await Self.notify(endpoint, bearer: "wrong-token", body: right))
                statuses.append(try await Self.notify(endpoint, bearer: nil, body: right))
                statuses.append(try await Self.notify(endpoint, bearer: token, body: Array(#"{"auth_req_id":"someone-else"}"#.utf8)))
                statuses.append(try await Self.notify(endpoint, bearer: token, body: Array("not json".utf8)))
                #expect(await provider.grantCount(Self.grant) == 0, "no refused notification triggers a token request")
                statuses.append(try await Self.notify(endpoint, bearer: token, body: right))
                return statuses
            }()
            let login = try await sandbox.run(
                try Self.arguments(provider, sandbox, ["--login-hint", subject, "--ciba-mode", "ping", "--notification-listen", "127.0.0.1:\(port)", "--profile", "ping"]))
            let statuses = try await notifications
            #expect(login.status == 0, "\(login.stderr)")
            #expect(statuses == [401, 401, 400, 400, 204])
            #expect(login.stderr.contains("listening for the provider's notification at http://127.0.0.1:\(port)/"), "\(login.stderr)")
            #expect(await provider.grantCount(Self.grant) == 1, "exactly one token request")
            let stored = try #require(try sandbox.storedLogin("ping"))
            #expect(stored.subject == subject && stored.grant?.type == .ciba)
            LoginCommandTests.expectNoSecret(login.stderr, stored.tokens, "login's stderr")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/ping.json", encoding: .utf8)
            #expect(profile.contains(#""ciba_mode" : "ping""#) && profile.contains(#""notification_listen" : "127.0.0.1:\#(port)""#), "\(profile)")
        }
    }

    @Test("ping: Ctrl-C while it waits for the notification exits 130 with no token request and nothing stored")
    func pingInterrupted() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let subject = await provider.user.subject
            let arguments = try Self.arguments(provider, sandbox, ["--login-hint", subject, "--ciba-mode", "ping", "--notification-listen", "127.0.0.1:0", "--profile", "ping"])
            let login = try await OIDCBinary.run(arguments, environment: sandbox.environment()) { running in
                awaitEvent { await !provider.pendingBackchannelLogins().isEmpty }
                running.interrupt()
            }
            #expect(login.status == 130, "\(login.stderr)")
            #expect(await provider.grantCount(Self.grant) == 0, "no token request after Ctrl-C")
            #expect(try sandbox.storedLogin("ping") == nil)
        }
    }

    @Test("bad input exits 2 before any request: control characters in the hint or message, a long message, no hint, a public client, ping without a listen address, --binding-message without the flow")
    func badInput() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let cases: [([String], String)] = [
                (try Self.arguments(provider, sandbox, ["--login-hint", "alice", "--binding-message", "pay\u{1B}[2J", "--profile", "a"]), "binding_message"),
                (try Self.arguments(provider, sandbox, ["--login-hint", "alice\nbob", "--profile", "b"]), "login_hint"),
                (try Self.arguments(provider, sandbox, ["--login-hint", "alice", "--binding-message", String(repeating: "x", count: 300), "--profile", "c"]), "binding_message"),
                (try Self.arguments(provider, sandbox, ["--profile", "d"]), "--login-hint"),
                (["login", "--flow", "ciba", "--issuer", provider.issuer, "--client-id", "test-client", "--login-hint", "alice", "--profile", "e"], "confidential"),
                (try Self.arguments(provider, sandbox, ["--login-hint", "alice", "--ciba-mode", "ping", "--profile", "f"]), "--notification-listen"),
                (try Self.arguments(provider, sandbox, ["--login-hint", "alice", "--ciba-mode", "ping", "--notification-listen", "10.0.0.1:80", "--profile", "g"]), "--notification-listen"),
                (["login", "--issuer", provider.issuer, "--client-id", "test-client", "--binding-message", "hi", "--profile", "h"], "--flow ciba"),
                (["login", "--issuer", provider.issuer, "--client-id", "test-client", "--flow", "device", "--ciba-mode", "ping", "--profile", "i"], "--flow ciba"),
                (["login", "--issuer", provider.issuer, "--client-id", "test-client", "--notification-listen", "127.0.0.1:0", "--profile", "j"], "--flow ciba"),
            ]
            for (arguments, named) in cases {
                let result = try await sandbox.run(arguments)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(named), "\(arguments): \(result.stderr)")
            }
            #expect(await provider.requestCount(.backchannelAuthentication) == 0)
            let unknown = try await sandbox.run(try Self.arguments(provider, sandbox, ["--login-hint", "mallory", "--profile", "u"]))
            #expect(unknown.status == 4 && unknown.stderr.contains("unknown_user_id"), "\(unknown.stderr)")
        }
    }

    /// POSTs a notification; its status.
    static func notify(_ url: URL, bearer: String?, body: [UInt8]) async throws -> Int {
        var headers = [RawHTTPClient.Header(name: "Content-Type", value: "application/json")]
        if let bearer { headers.append(RawHTTPClient.Header(name: "Authorization", value: "Bearer \(bearer)")) }
        for _ in 0..<100 {
            do {
                return try await RawHTTPClient.send("POST", url.absoluteString, headers: headers, body: body).status
            } catch {
                // The command may not listen yet.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw CIBATestError.noListener
    }
}

enum CIBATestError: Error {
    case noRequest
    case noListener
}
