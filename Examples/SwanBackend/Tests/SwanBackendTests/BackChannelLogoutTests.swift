import Foundation
import Hummingbird
import OIDC
import OIDCResourceServer
import OIDCTesting
@testable import SwanBackend
import Testing

extension SwanBackendTests {
    static func logoutRequest(_ base: String, body: String, contentType: String = "application/x-www-form-urlencoded") throws -> OIDC.HTTPRequest {
        OIDC.HTTPRequest(
            method: "POST", url: try #require(URL(string: base + "/backchannel-logout")), headers: ["Content-Type": contentType],
            body: Array(body.utf8))
    }

    @Test("POST /backchannel-logout: a provider's logout token ends that session only (200 no-store); a replay or a bad form is a 400 with a JSON error")
    func backChannelLogout() async throws {
        try await withSwan { swan in
            var user = TestUser.default
            user.extraClaims["sid"] = .string("op-session-laptop")
            await swan.provider.setUser(user)
            let (laptop, laptopCookie) = try await swan.logIn()
            user.extraClaims["sid"] = .string("op-session-phone")
            await swan.provider.setUser(user)
            let (phone, _) = try await swan.logIn()
            let laptopKey = try swan.backend.key(forSession: laptop), phoneKey = try swan.backend.key(forSession: phone)
            let stored = try #require(try await swan.backend.sessions.load(laptopKey))
            #expect(stored.sessionID == "op-session-laptop")

            // The provider ends the laptop's session at its end.
            let token = try await swan.provider.logoutToken(TestProvider.LogoutTokenContents(for: stored))
            let logout = try await swan.transport.send(try Self.logoutRequest(swan.base, body: "logout_token=" + token))
            #expect(logout.status == 200)
            #expect(logout.headers["Cache-Control"] == "no-store")
            #expect(try await swan.backend.sessions.load(laptopKey) == nil)
            #expect(try await swan.backend.sessions.load(phoneKey)?.sessionID == "op-session-phone")
            let consent = try await swan.get(swan.base + "/consent/callback?consentId=consent-1&env=Sandbox&status=Accepted", cookie: laptopCookie)
            #expect(consent.status == 401)

            // The same token again: refused as a replay, naming the rule, never echoing the token.
            let replay = try await swan.transport.send(try Self.logoutRequest(swan.base, body: "logout_token=" + token))
            #expect(replay.status == 400)
            #expect(replay.headers["Cache-Control"] == "no-store")
            #expect(replay.headers["Content-Type"] == "application/json")
            let error = try #require(try JSONSerialization.jsonObject(with: Data(replay.body)) as? [String: String])
            #expect(error["error"] == "invalid_request")
            #expect(error["error_description"]?.contains("replayed") == true)
            #expect(!String(decoding: replay.body, as: UTF8.self).contains(token))

            // Not a form, or no token: 400.
            let json = try await swan.transport.send(try Self.logoutRequest(swan.base, body: #"{"logout_token":"x"}"#, contentType: "application/json"))
            #expect(json.status == 400)
            let empty = try await swan.transport.send(try Self.logoutRequest(swan.base, body: ""))
            #expect(empty.status == 400)
            #expect(try await swan.backend.sessions.load(phoneKey) != nil)

            // A token naming only the user ends all of the user's sessions.
            let everywhere = try await swan.provider.logoutToken(
                TestProvider.LogoutTokenContents(subject: stored.subject, audience: [Self.clientID]))
            let all = try await swan.transport.send(try Self.logoutRequest(swan.base, body: "logout_token=" + everywhere))
            #expect(all.status == 200)
            #expect(try await swan.backend.sessions.load(phoneKey) == nil)
        }
    }
}
