import ArgumentParser
import Foundation
import OIDC

/// `oidc refresh`: refresh the stored tokens now.
struct Refresh: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Refresh a stored login's tokens now (prints nothing on stdout).",
        discussion: """
            Refreshes under the store's lock, like oidc token. A refresh the provider rejects ends the \
            login and says so (exit 4); an unreachable provider exits 5 and keeps the login; a store \
            with no room for the answer exits 7 before anything is sent, and keeps it.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @OptionGroup var credentials: StoredLoginCredentials

    @OptionGroup var tls: TLSOptions

    @Option(help: "Seconds to wait for the token endpoint (default: $OIDC_HTTP_TIMEOUT, else 10).")
    var timeout: Int?

    func validate() throws { _ = try NetworkTimeout.seconds(flag: timeout, default: Token.defaultTimeout) }

    func run() async throws {
        let stored = try ProfileLogin.load(storeOptions)
        try stored.requireRefreshable(clientSecretFile: credentials.clientSecretFile)
        guard stored.login.tokens.refreshToken != nil || stored.login.renewsByOwnGrant else {
            throw OIDCError(
                .notLoggedIn, "The login of profile '\(storeOptions.profileName)' has no refresh token (ask for offline_access when you log in); log in again with: \(stored.loginAgain)",
                context: ["profile": storeOptions.profileName]
            )
        }
        var configuration = try tls.transportConfiguration(over: stored.boundProfile)
        configuration.maximumRequestTimeout = .seconds(try NetworkTimeout.seconds(flag: timeout, default: Token.defaultTimeout))
        let (login, problem) = try await withNIOHTTPTransport(configuration: configuration, logger: CLILog.logger(.transport)) { transport in
            let session = try stored.session(transport: transport, clientSecretFile: credentials.clientSecretFile, allowlist: HostAllowlist([]))
            let tokens = try await session.validTokens(forceRefresh: true)
            var login = try await session.login ?? stored.login
            login.tokens = tokens
            return (login, await session.storageProblem)
        }
        if let problem {
            Console.error("oidc: error: \(Token.unstored(problem, profile: stored))")
            throw ExitCode(ExitCodes.storage)
        }
        Console.error("oidc: refreshed; \(Login.summary(login, profile: storeOptions.profileName))")
    }
}
