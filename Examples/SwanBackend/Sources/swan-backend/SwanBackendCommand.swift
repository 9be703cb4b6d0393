import ArgumentParser
import Foundation
import Hummingbird
import OIDC
import OIDCResourceServer
import OIDCTesting
import PostgresNIO
import SwanBackend
import SwanStandIns

@main
struct SwanBackendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swan-backend",
        abstract: "Serves Swan's server-side login (/auth, /auth/callback) and consent redirects (/consent/callback).",
        discussion: """
            With --demo, a provider configured like Swan (a confidential client, client_secret_post, \
            scope openid offline) and a stand-in for Swan's consent API run on 127.0.0.1, and the demo \
            plays a browser through a login and a consent redirect.

            With DATABASE_URL set (postgres://user:password@host:5432/database), sessions are kept in \
            PostgreSQL, sealed with the key in OIDC_TOKEN_KEY_FILE (or OIDC_TOKEN_KEY): every instance \
            of the backend shares them. The table is created at start-up if missing.
            """
    )

    @Option(help: "Your Swan client id (SANDBOX_… or LIVE_…).")
    var clientID: String?

    @Option(help: "A file holding the client secret (never a flag: flags are visible to other users).")
    var clientSecretFile: String?

    @Option(help: "Where browsers reach this server; the redirect URI is {URL}/auth/callback.")
    var publicURL: String?

    @Option(help: "The port to listen on, on 127.0.0.1 (put a TLS proxy in front); 8080, or a free one with --demo.")
    var port: Int?

    @Flag(help: "Run against local stand-ins for Swan and walk through a login and a consent.")
    var demo = false

    func run() async throws {
        guard let (store, replays, client) = try SessionStore.postgres() else {
            try await serve(sessions: InMemoryTokenStore(), replays: InMemoryReplayStore())
            return
        }
        // The pool runs beside the server and stops with it.
        let running = Task { await client.run() }
        defer { running.cancel() }
        try await store.migrate()
        try await replays.migrate()
        try await serve(sessions: store, replays: replays)
    }

    func serve(sessions: any TokenStore, replays: any ReplayStore) async throws {
        try await withNIOHTTPTransport { transport in
            if demo {
                try await Demo.run(port: port, transport: transport, sessions: sessions, replays: replays)
                return
            }
            guard let clientID, let clientSecretFile, let publicURL, let base = URL(string: publicURL) else {
                throw ValidationError("Give --client-id, --client-secret-file and --public-url, or --demo.")
            }
            let secret = try String(contentsOfFile: clientSecretFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let backend = try await SwanBackend.start(
                SwanSettings(clientID: clientID, clientSecret: Secret(secret), publicBaseURL: base), transport: transport,
                sessions: sessions, replays: replays
            )
            let router = Router()
            backend.addRoutes(to: router)
            let port = port ?? 8080
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
            print("Listening on http://127.0.0.1:\(port); register \(backend.settings.redirectURI) with Swan (and \(base.appendingPathComponent("backchannel-logout").absoluteString) as its back-channel logout URI).")
            try await app.runService()
        }
    }
}
