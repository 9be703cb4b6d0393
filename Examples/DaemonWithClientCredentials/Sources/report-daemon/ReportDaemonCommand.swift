import ArgumentParser
import Foundation
import Logging
import OIDC
import ReportDaemon

@main
struct ReportDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-daemon",
        abstract: "Calls an API with its own tokens (OAuth 2 client credentials): once, as a CI job, or every N seconds.",
        discussion: """
            Configured by environment variables: OIDC_ISSUER, OIDC_CLIENT_ID, API_URL, and \
            OIDC_PRIVATE_KEY_FILE (private_key_jwt; OIDC_KEY_ID its kid) or OIDC_CLIENT_SECRET_FILE \
            (client_secret_basic); optionally OIDC_SCOPE (space-separated), OIDC_TOKEN_DIR (processes \
            share one token there) and LOG_LEVEL (the library's log lines on stderr; warning by \
            default). Secrets are only ever read from files that no other user can read.

            Exit status: 0 done, 75 temporary failure (the network, the provider down), 77 refused \
            (invalid_client, invalid_scope, a 401 from the API), 78 configuration, 74 token directory.
            """
    )

    @Option(help: "Call the API every this many seconds until stopped; once without it.")
    var every: Int?

    @Option(help: "Requests per round, sent at once: they share one token request.")
    var parallel = 1

    @Flag(help: "Ask the provider about the daemon's token (introspection), print what it says, and stop.")
    var check = false

    @Flag(help: "Print the public JWKS of OIDC_PRIVATE_KEY_FILE, to register at the provider, and stop.")
    var publicJWKS = false

    @Flag(help: "Start a local provider with this daemon registered as a client, and run against it.")
    var demo = false

    func validate() throws {
        guard (1...100).contains(parallel) else { throw ValidationError("--parallel must be 1 to 100.") }
        if let every, every < 1 { throw ValidationError("--every must be at least 1 second.") }
        if demo, every != nil || check || publicJWKS { throw ValidationError("--demo runs its own steps; give it alone.") }
    }

    func run() async throws {
        let status = demo ? await Demo.run() : await run(environment: ProcessInfo.processInfo.environment)
        if status != 0 { throw ExitCode(status) }
    }

    /// The daemon with `environment`, as it runs in production; what went wrong on stderr, never a
    /// secret or a token. Returns the exit status.
    func run(environment: [String: String]) async -> Int32 {
        do {
            if publicJWKS {
                say(try Self.publicJWKS(environment))
                return 0
            }
            let configuration = try DaemonConfiguration(environment: environment)
            let daemon = try await ReportDaemon.start(configuration, logger: Self.logger(environment))
            say("report-daemon: \(daemon.summary); scope \(configuration.scopes.isEmpty ? "(the client's default)" : configuration.scopes.joined(separator: " "))")
            if check {
                say("token: " + ReportDaemon.describe(try await daemon.checkToken()))
                return 0
            }
            try await loop(daemon)
            return 0
        } catch {
            say("report-daemon: error: \(error)", to: .standardError)
            return DaemonExit.status(for: error)
        }
    }

    /// One round, or a round every `--every` seconds; a transient failure waits for the next round.
    private func loop(_ daemon: ReportDaemon) async throws {
        var number = 1
        while true {
            do {
                let round = try await daemon.round(parallel: parallel)
                say("round \(number): \(round)")
            } catch {
                guard let every, DaemonExit.isTransient(error) else { throw error }
                say("report-daemon: round \(number) failed, trying again in \(every) s: \(error)", to: .standardError)
            }
            guard let every else { return }
            try await Task.sleep(for: .seconds(every))
            number += 1
        }
    }

    /// `{"keys":[…]}` with the public half of OIDC_PRIVATE_KEY_FILE (and OIDC_KEY_ID as its `kid`).
    static func publicJWKS(_ environment: [String: String]) throws -> String {
        guard let path = environment["OIDC_PRIVATE_KEY_FILE"], !path.isEmpty else {
            throw ConfigurationError("OIDC_PRIVATE_KEY_FILE", "not set; --public-jwks prints the public half of that key.")
        }
        let key: JWSSigningKey
        do { key = try JWSSigningKey(contentsOfFile: path, keyID: environment["OIDC_KEY_ID"]) } catch {
            throw ConfigurationError("OIDC_PRIVATE_KEY_FILE", error.message)
        }
        return JSONValue.object(["keys": .array([.object(key.publicJWK)])]).jsonText
    }

    /// The library's log lines on stderr at LOG_LEVEL (`warning` unless told): requests, token
    /// requests and their reasons, lock waits; never a token or a secret.
    static func logger(_ environment: [String: String]) -> Logger {
        var logger = Logger(label: "report-daemon") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .warning
        return logger
    }
}

/// One line on stdout (or stderr), written at once: in order with the other stream's lines, also
/// through a pipe.
func say(_ line: String, to handle: FileHandle = .standardOutput) {
    handle.write(Data((line + "\n").utf8))
}
