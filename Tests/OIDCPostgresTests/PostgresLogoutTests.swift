import Foundation
import OIDC
import OIDCPostgres
import PostgresNIO
import Testing

@Suite("PostgresTokenStore: logins deleted by a back-channel logout", TestDatabase.available)
struct PostgresLogoutTests {
    @Test("migrate() adds the logout columns to a table of an earlier version; the rows hold hashes, never sub or sid")
    func upgradesAndHashes() async throws {
        try await TestDatabase.withClient { client throws in
            let table = TestDatabase.newTable()
            // The table as the previous version made it.
            try await client.query(
                """
                CREATE TABLE \(unescaped: table) (service text NOT NULL, account text NOT NULL, key_id text NOT NULL, record bytea NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (service, account))
                """
            ).drain()
            let store = try PostgresTokenStore(client: client, encryption: try TokenEncryption(current: TestDatabase.key1), table: table)
            try await store.migrate()
            try await store.migrate()
            var login = TestDatabase.login()
            login.sessionID = "op-session-secretive"
            let key = TokenStoreKey(service: "app", account: "alice")
            try await store.save(login, for: key)
            let rows = try await client.query("SELECT client_id, subject_hash, session_hash FROM \(unescaped: table)")
            for try await (clientID, subject, session) in rows.decode((String, ByteBuffer, ByteBuffer).self) {
                #expect(clientID == "client-1")
                #expect(subject.readableBytes == 32 && session.readableBytes == 32)
                #expect(!String(decoding: session.readableBytesView, as: UTF8.self).contains("op-session"))
            }
            #expect(try await store.deleteLogins(try LoginSelector(issuer: "https://issuer.example", sessionID: "other-session")) == 0)
            #expect(try await store.deleteLogins(try LoginSelector(issuer: "https://issuer.example", sessionID: "op-session-secretive")) == 1)
            #expect(try await store.load(key) == nil)
            try await client.query("DROP TABLE \(unescaped: table)").drain()
        }
    }
}
