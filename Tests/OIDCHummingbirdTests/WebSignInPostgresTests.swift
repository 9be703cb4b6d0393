import Foundation
import OIDC
import OIDCHummingbird
import OIDCPostgres
import OIDCTestSupport
import OIDCTesting
import PostgresNIO
import Testing

/// Web sign-in for a fleet: two instances of an app share their sessions in PostgreSQL
/// (`PostgresTokenStore`), over real loopback HTTP against TestProvider, in the throw-away
/// PostgreSQL that `scripts/postgres.sh run` starts (OIDC_TEST_DATABASE_URL).
@Suite(
    "OIDCHummingbird: web sign-in with its sessions in PostgreSQL",
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_TEST_DATABASE_URL"] != nil, "set OIDC_TEST_DATABASE_URL (scripts/postgres.sh run, which make test-package uses, does)"))
struct WebSignInPostgresTests {
    @Test("signed in at one instance, signed in at the other; an expired token refreshed once for both at once; signed out at one, signed out at both")
    func twoInstances() async throws {
        let clock = WebSignInTests.Clock()
        try await WebSignInTests.withRelyingParty(clock: clock) { provider, rp in
            try await Self.withSessions { sessions in
                try await WebSignInTests.serveApp(rp, sessions: sessions, backChannelLogout: false) { first, _ in
                    try await WebSignInTests.serveApp(rp, sessions: sessions, backChannelLogout: false) { second, _ in
                        // One browser: its cookies go to both instances (127.0.0.1, whatever the port).
                        let browser = TestBrowser(cookies: CookieJar(), submitsForms: false)
                        let signedIn = try await browser.open(try #require(URL(string: first + "/")))
                        #expect(signedIn.status == 200 && signedIn.body.contains("Hello, test-user"), "\(signedIn.body)")
                        let other = try await browser.open(try #require(URL(string: second + "/")))
                        #expect(other.status == 200 && other.history.count == 1, "the other instance knows the session")

                        clock.advance(601)  // the access token (600 s) has expired
                        async let one = browser.open(try #require(URL(string: first + "/")))
                        async let two = browser.open(try #require(URL(string: second + "/")))
                        let pages = try await [one, two]
                        #expect(pages.allSatisfy { $0.status == 200 && $0.history.count == 1 }, "\(pages.map(\.status))")
                        #expect(await provider.grantCount("refresh_token") == 1, "one refresh, under the store's lock")

                        let csrf = try #require(other.body.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
                        let out = try await browser.post(try #require(URL(string: second + "/auth/logout")), form: ["csrf": String(csrf)])
                        #expect(out.body == "signed out", "\(out.status) \(out.body)")
                        let again = try await browser.open(try #require(URL(string: first + "/")))
                        #expect(again.history.contains { $0.absoluteString.hasPrefix(provider.issuer + "/authorize") }, "a new sign-in")
                        #expect(await provider.grantCount("authorization_code") == 2)
                    }
                }
            }
        }
    }

    /// A migrated `PostgresTokenStore` in a new table of the test database, dropped afterwards.
    static func withSessions(_ body: (PostgresTokenStore) async throws -> Void) async throws {
        let url = try #require(ProcessInfo.processInfo.environment["OIDC_TEST_DATABASE_URL"])
        let client = PostgresClient(configuration: try PostgresConnectionURL.configuration(from: url))
        let running = Task { await client.run() }
        defer { running.cancel() }
        let table = "web_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let key = try TokenEncryptionKey(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) })
        let store = try PostgresTokenStore(client: client, encryption: try TokenEncryption(current: key), table: table)
        try await store.migrate()
        do {
            try await body(store)
        } catch {
            try? await client.query("DROP TABLE \(unescaped: table)").drain()
            throw error
        }
        try await client.query("DROP TABLE \(unescaped: table)").drain()
    }
}
