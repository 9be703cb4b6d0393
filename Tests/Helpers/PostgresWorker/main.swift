// The PostgresTokenStore tests' instance of "another server" (not a product): its own process, its
// own connection pool, its own AuthenticatedSession.
//
//   oidc-postgres-worker refresh
//       connects, prints "ready", waits for a line on standard input (the start signal), asks its
//       session for valid tokens and prints "token <SHA-256 of the access token, hex>", or
//       "error <code>: <message>" and exits 1.
//   oidc-postgres-worker hold
//       connects, takes the login's lock, prints "locked" and sleeps until killed.
//   oidc-postgres-worker claim
//       connects, prints "ready", then for each line "<identifier> <expiry, seconds since 1970>"
//       on standard input claims it in a PostgresReplayStore (table OIDC_TABLE) and prints
//       "claimed" (first use) or "replayed"; "error <message>" and exits 1 on a failure.
//
// Environment: OIDC_TEST_DATABASE_URL, OIDC_TABLE, OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_SERVICE,
// OIDC_ACCOUNT, OIDC_TOKEN_KEY (the encoded encryption key), OIDC_TOKEN_KEY_ID (its id, optional),
// OIDC_OPERATION_TIMEOUT (the replay store's, in seconds; 5 by default).
import Foundation
import HelperSupport
import Logging
import OIDC
import OIDCPostgres
import PostgresNIO

func variable(_ name: String) -> String {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { fail("\(name) is not set") }
    return value
}

let mode = CommandLine.arguments.dropFirst().first ?? ""
guard mode == "refresh" || mode == "hold" || mode == "claim" else { fail("usage: oidc-postgres-worker refresh|hold|claim") }

let configuration: PostgresClient.Configuration
do { configuration = try PostgresConnectionURL.configuration(from: variable("OIDC_TEST_DATABASE_URL")) } catch { fail("\(error)") }
let client = PostgresClient(configuration: configuration)
let running = Task { await client.run() }

if mode == "claim" {
    do {
        // The tests' own operationTimeout (their time scale), else the store's default.
        let seconds = ProcessInfo.processInfo.environment["OIDC_OPERATION_TIMEOUT"].flatMap(Int.init) ?? 5
        let replays = try PostgresReplayStore(client: client, table: variable("OIDC_TABLE"), operationTimeout: .seconds(seconds))
        _ = try await replays.purgeExpired()  // the pool has a connection before "ready"
        say("ready")
        while let line = readLine() {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let seconds = Double(parts[1]) else { fail("a claim line is '<identifier> <expiry>'") }
            say(try await replays.claim(String(parts[0]), until: Date(timeIntervalSince1970: seconds)) ? "claimed" : "replayed")
        }
    } catch {
        say("error \(error)")
        exit(1)
    }
    running.cancel()
    exit(0)
}

let key = TokenStoreKey(service: variable("OIDC_SERVICE"), account: variable("OIDC_ACCOUNT"))

func work() async throws {
    let keyID = ProcessInfo.processInfo.environment["OIDC_TOKEN_KEY_ID"]
    let encryption = try TokenEncryption(current: TokenEncryptionKey(id: keyID, encoded: variable("OIDC_TOKEN_KEY")))
    let store = try PostgresTokenStore(client: client, encryption: encryption, table: variable("OIDC_TABLE"))
    if mode == "hold" {
        try await store.withLock(key) {
            say("locked")
            try await Task.sleep(for: .seconds(600))
        }
        fail("still holding the lock after 600 s")
    }
    try await withNIOHTTPTransport { transport in
        let issuer = variable("OIDC_ISSUER")
        let provider = try await ProviderDiscovery(transport: transport).metadata(for: issuer).configuration()
        let tokenClient = TokenClient(provider: provider, clientID: variable("OIDC_CLIENT_ID"), transport: transport)
        guard let issuerURL = URL(string: issuer) else { fail("OIDC_ISSUER is not a URL") }
        let session = AuthenticatedSession(
            store: store, key: key, source: .refreshToken(tokenClient), transport: transport, allowlist: .default(for: issuerURL))
        _ = try await store.keys()  // the pool has a connection before the start signal
        say("ready")
        _ = readLine()
        let tokens = try await session.validTokens()
        let digest = try LibCrypto.sha256(Array(tokens.accessToken.revealedValue.utf8))
        say("token " + digest.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined())
    }
}

do {
    try await work()
} catch let error as OIDCError {
    say("error \(error.code): \(error.message)")
    exit(1)
} catch {
    say("error \(error)")
    exit(1)
}
running.cancel()
