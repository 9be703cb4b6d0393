import Foundation
import Logging
import OIDC
import OIDCPostgres
import OIDCTestSupport
import PostgresNIO
import Testing

/// A database URL's TLS: required unless the URL says otherwise, so that an attacker in the path
/// cannot downgrade the connection to plaintext. The test server has no TLS, which is what the
/// tests rely on: a connection that requires TLS is refused by it.
@Suite("PostgresConnectionURL: TLS required unless the URL says otherwise", .timeLimit(.scaledMinutes(2)))
struct PostgresConnectionURLTests {
    /// The test server's URL with its `sslmode` replaced (`nil`: none at all).
    static func testURL(sslmode: String?) throws -> String {
        let base = try #require(TestDatabase.url)
        var components = try #require(URLComponents(string: base))
        components.queryItems = sslmode.map { [URLQueryItem(name: "sslmode", value: $0)] }
        return try #require(components.string)
    }

    static func password(of url: String) throws -> String {
        let password = try #require(URLComponents(string: url)?.password)
        try #require(password.count >= 8)
        return password
    }

    @Test(
        "without sslmode, and with require, verify-ca or verify-full, TLS is required: the test server, which has none, is refused with a message that says to enable TLS or write sslmode=disable, never the password; nothing is logged",
        TestDatabase.available, arguments: [nil, "require", "verify-ca", "verify-full"] as [String?])
    func tlsRequired(sslmode: String?) async throws {
        let url = try Self.testURL(sslmode: sslmode)
        let log = LogRecorder()
        var configuration = try PostgresConnectionURL.configuration(from: url, logger: log.logger("oidc.store"))
        configuration.options.connectTimeout = .scaled(.seconds(5))
        #expect(log.all.isEmpty, "\(log.all.map(\.text))")
        let client = PostgresClient(configuration: configuration)
        let error = try await withThrowingTaskGroup(of: OIDCError?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            let store = try PostgresTokenStore(
                client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: TestDatabase.newTable(), operationTimeout: .scaled(.seconds(3)))
            return await #expect(throws: OIDCError.self) { _ = try await store.keys() }
        }
        #expect(
            error?.code == .storageFailure && error?.message.contains("TLS") == true && error?.message.contains("sslmode=disable") == true,
            "\(String(describing: error))")
        let password = try Self.password(of: url)
        #expect(error.map { !"\($0)".contains(password) } ?? true)
    }

    @Test(
        "sslmode=prefer (and allow) still connects to a server without TLS, in plaintext, and warns through the logger it is given, without the password; disable connects and logs nothing",
        TestDatabase.available)
    func preferWarns() async throws {
        for mode in ["prefer", "allow"] {
            let url = try Self.testURL(sslmode: mode)
            let log = LogRecorder()
            _ = try PostgresConnectionURL.configuration(from: url, logger: log.logger("oidc.store"))
            #expect(log.all.count == 1 && log.all.allSatisfy { $0.level == .warning }, "\(log.all.map(\.text))")
            #expect(log.all.contains { $0.text.contains("sslmode=\(mode)") && $0.text.contains("sslmode=require") && $0.text.contains("host=127.0.0.1") })
            let password = try Self.password(of: url)
            for line in log.all { #expect(!line.text.contains(password)) }
            try await TestDatabase.withClient(url: url) { client in
                let store = try PostgresTokenStore(client: client, encryption: TokenEncryption(current: TestDatabase.key1), table: TestDatabase.newTable())
                try await store.migrate()
                #expect(try await store.keys().isEmpty)
                try await client.query("DROP TABLE \(unescaped: store.table)").drain()
            }
        }
        let quiet = LogRecorder()
        _ = try PostgresConnectionURL.configuration(from: try Self.testURL(sslmode: "disable"), logger: quiet.logger("oidc.store"))
        #expect(quiet.all.isEmpty)
    }

    @Test("an sslmode that is not one of them is refused with an invalidArgument that lists them, never the password; a Unix socket URL needs no TLS and logs nothing")
    func unknownModes() throws {
        for mode in ["", "Require", "true", "verify"] {
            let url = "postgres://oidc:secret-password-123@db.example:5432/app?sslmode=\(mode)"
            let error = try #require(throws: OIDCError.self) { try PostgresConnectionURL.configuration(from: url) }
            #expect(error.code == .invalidArgument && error.message.contains("require (the default)"), "\(error)")
            #expect(!"\(error)".contains("secret-password-123"))
        }
        let log = LogRecorder()
        let socket = try PostgresConnectionURL.configuration(from: "postgres://oidc@/app?host=/var/run/postgresql", logger: log.logger("oidc.store"))
        #expect(socket.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432")
        #expect(log.all.isEmpty)
    }
}
