import Foundation
import Hummingbird
import OIDC
import OIDCResourceServer
import OIDCTesting
import SwanBackend
import SwanStandIns

/// The whole server-side flow on 127.0.0.1: a provider configured like Swan, a stand-in for Swan's
/// consent API, the backend, a browser played over HTTP, and the provider's back-channel logout.
enum Demo {
    static let clientID = "SANDBOX_DEMO_CLIENT"

    static func run(port: Int?, transport: NIOHTTPTransport, sessions: any TokenStore, replays: any ReplayStore) async throws {
        let port = try port ?? reserveLoopbackPort()
        let secret = try RandomToken.generate()
        // The user's ID tokens carry a provider session id (sid), which a back-channel logout names.
        var user = TestUser.default
        user.extraClaims["sid"] = .string("op-session-\(try RandomToken.generate().prefix(8))")
        let swanLike = TestProvider.Configuration(
            clients: [.confidential(id: clientID, secret: secret, authentication: .clientSecretPost, redirectURIs: ["http://127.0.0.1/auth/callback"])],
            user: user)
        try await withTestProvider(swanLike) { provider in
            let api = ConsentAPIStandIn(provider: provider, transport: transport, statuses: ["demo-consent": "Accepted"])
            let apiRouter = Router()
            api.addRoutes(to: apiRouter)
            try await serve(apiRouter, port: 0) { apiPort in
                let settings = SwanSettings(
                    clientID: clientID, clientSecret: Secret(secret), publicBaseURL: URL(string: "http://127.0.0.1:\(port)")!,
                    issuer: provider.issuer, apiURL: URL(string: "http://127.0.0.1:\(apiPort)/graphql")!
                )
                let backend = try await SwanBackend.start(settings, transport: transport, sessions: sessions, replays: replays)
                let router = Router()
                backend.addRoutes(to: router)
                try await serve(router, port: port) { _ in
                    try await walkThrough(backend, transport: transport, provider: provider)
                }
            }
        }
    }

    /// Plays the browser: `/auth`, the provider, `/auth/callback`, then a consent redirect that lies.
    static func walkThrough(_ backend: SwanBackend, transport: NIOHTTPTransport, provider: TestProvider) async throws {
        let base = backend.settings.publicBaseURL.absoluteString
        print("1. GET \(base)/auth")
        let start = try await transport.send(OIDC.HTTPRequest(url: URL(string: base + "/auth")!))
        let loginCookie = cookiePair(start.headers.values("Set-Cookie"), named: backend.loginCookie)
        print("   → \(start.status), Set-Cookie: \(start.headers.values("Set-Cookie").first.map(redacted) ?? "none")")
        print("   → the authorization URL at the provider (client_secret_post client, scope openid offline)")

        let atProvider = try await transport.send(OIDC.HTTPRequest(url: URL(string: start.headers["Location"]!)!))
        let callback = atProvider.headers["Location"]!
        print("2. the provider signs the user in and redirects to /auth/callback?code=…&state=…&iss=…")

        let finish = try await transport.send(OIDC.HTTPRequest(url: URL(string: callback)!, headers: ["Cookie": loginCookie ?? ""]))
        let deepLink = finish.headers["Location"] ?? ""
        print("3. GET /auth/callback (with the login cookie) → \(finish.status), to the app: \(deepLink.prefix(while: { $0 != "=" }))=<session id>")
        let sessionCookie = cookiePair(finish.headers.values("Set-Cookie"), named: backend.sessionCookie) ?? ""

        let forged = base + "/consent/callback?consentId=demo-consent&env=Sandbox&status=Canceled"
        print("4. a consent redirect arrives saying status=Canceled")
        let consent = try await transport.send(OIDC.HTTPRequest(url: URL(string: forged)!, headers: ["Cookie": sessionCookie]))
        print("   → \(consent.status), the app is told what Swan's API says: \(consent.headers["Location"] ?? "")")
        let replay = try await transport.send(OIDC.HTTPRequest(url: URL(string: callback)!, headers: ["Cookie": loginCookie ?? ""]))
        print("5. the same /auth/callback again → \(replay.status): \(String(decoding: replay.body, as: UTF8.self).trimmingCharacters(in: .newlines))")

        // The user signs out at the provider, which tells the backend through the back channel.
        let sessionID = String(sessionCookie.drop(while: { $0 != "=" }).dropFirst())
        let stored = try await backend.sessions.load(try backend.key(forSession: sessionID))
        let logoutToken = try await provider.logoutToken(TestProvider.LogoutTokenContents(for: try stored.orThrow()))
        let form = OIDC.HTTPRequest(
            method: "POST", url: URL(string: base + "/backchannel-logout")!,
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array("logout_token=\(logoutToken)".utf8))
        let logout = try await transport.send(form)
        print("6. the provider POSTs a logout token (its sub and sid) to /backchannel-logout → \(logout.status), Cache-Control: \(logout.headers["Cache-Control"] ?? "none")")
        let after = try await transport.send(OIDC.HTTPRequest(url: URL(string: forged)!, headers: ["Cookie": sessionCookie]))
        print("   the session is gone: the consent redirect again → \(after.status)")
        let again = try await transport.send(form)
        print("7. the same logout token again → \(again.status): \(String(decoding: again.body, as: UTF8.self))")
    }

    struct NoSession: Error, CustomStringConvertible {
        var description: String { "The backend kept no session after the login." }
    }

    static func cookiePair(_ headers: [String], named name: String) -> String? {
        headers.lazy.compactMap { $0.split(separator: ";").first.map(String.init) }.first { $0.hasPrefix(name + "=") }
    }

    static func redacted(_ header: String) -> String {
        guard let equals = header.firstIndex(of: "="), let semicolon = header.firstIndex(of: ";") else { return header }
        return header[...equals] + "…" + header[semicolon...]
    }
}


extension Optional where Wrapped == StoredLogin {
    func orThrow() throws -> StoredLogin {
        guard let login = self else { throw Demo.NoSession() }
        return login
    }
}
