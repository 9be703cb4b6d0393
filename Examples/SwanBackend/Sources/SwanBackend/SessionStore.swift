import Foundation
import Logging
import OIDC
import OIDCPostgres
import OIDCResourceServer
import PostgresNIO

/// Where the backend keeps its users' tokens: in PostgreSQL when `DATABASE_URL` is set (every
/// instance of the backend then shares the sessions, and a refresh happens once across them), in
/// this process's memory otherwise.
public enum SessionStore {
    /// A PostgreSQL store, a replay store for the back-channel logout tokens in the same database,
    /// and the pool they use (run the pool, `client.run()`, as a service beside the server), or
    /// `nil` when `DATABASE_URL` is not set. Run both stores' `migrate()` once at start-up.
    ///
    /// The tokens are sealed with AES-256-GCM under the key in the file `OIDC_TOKEN_KEY_FILE` (32
    /// bytes, base64 or hex; mode 0600), or in `OIDC_TOKEN_KEY`. To rotate, put the new key there
    /// and the old one in `OIDC_TOKEN_PREVIOUS_KEY_FILE`.
    ///
    /// The store logs to `logger` (by default swift-log's `oidc.store`, at `info` and above: a lost
    /// or timed-out lock, a record that does not open), never a token.
    public static func postgres(
        environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger = Logger(label: "oidc.store")
    ) throws -> (store: PostgresTokenStore, replays: PostgresReplayStore, client: PostgresClient)? {
        guard let url = environment["DATABASE_URL"], !url.isEmpty else { return nil }
        let current: TokenEncryptionKey
        if let file = environment["OIDC_TOKEN_KEY_FILE"], !file.isEmpty {
            current = try TokenEncryptionKey(contentsOfFile: file)
        } else if environment["OIDC_TOKEN_KEY"] != nil {
            current = try TokenEncryptionKey(environmentVariable: "OIDC_TOKEN_KEY", environment: environment)
        } else {
            throw SwanBackendError.noTokenKey
        }
        let previous = try environment["OIDC_TOKEN_PREVIOUS_KEY_FILE"].map { [try TokenEncryptionKey(contentsOfFile: $0)] } ?? []
        let client = PostgresClient(configuration: try PostgresConnectionURL.configuration(from: url, logger: logger))
        let store = try PostgresTokenStore(client: client, encryption: TokenEncryption(current: current, previous: previous), logger: logger)
        // The logout tokens' jtis, shared like the sessions: a replay at another instance is refused there.
        let replays = try PostgresReplayStore(client: client, logger: logger)
        return (store, replays, client)
    }
}
