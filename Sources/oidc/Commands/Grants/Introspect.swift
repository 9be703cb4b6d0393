import ArgumentParser
import Foundation
import OIDC

/// `oidc introspect`: asks the provider whether a token is active (RFC 7662).
struct Introspect: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask the provider whether a token is active (RFC 7662) and print its answer as JSON.",
        discussion: """
            Sends the token to the provider's introspection endpoint, authenticated as the \
            profile's client, and prints the provider's answer on stdout as compact JSON (members \
            sorted; pipe it to jq). Without TOKEN, the profile's own access token, refreshed first \
            when it is due (or its refresh token with --token-type-hint refresh_token).

            Exit codes: 0 the token is active, 4 it is not (or the provider refused the request), \
            2 usage, 5 the provider is unreachable.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "The token: - reads it from standard input, @FILE from a file (default: the profile's).")
    var token: String?

    @Option(help: "What the token is: access_token or refresh_token (RFC 7009 §2.1).")
    var tokenTypeHint: Hint?

    @OptionGroup var credentials: StoredLoginCredentials

    @OptionGroup var tls: TLSOptions

    enum Hint: String, ExpressibleByArgument, CaseIterable {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"

        var hint: TokenClient.TokenTypeHint { self == .accessToken ? .accessToken : .refreshToken }
    }

    func run() async throws {
        let stored = try ProfileLogin.load(storeOptions)
        let given = try token.map { Secret(try TokenInput.secret($0, flag: "TOKEN")) }
        let refreshToken = try tokenTypeHint == .refreshToken && given == nil ? profileRefreshToken(stored.login) : nil
        try stored.requireRefreshable(clientSecretFile: credentials.clientSecretFile)
        let configuration = try tls.transportConfiguration(over: stored.boundProfile)
        let answer = try await withNIOHTTPTransport(configuration: configuration, logger: CLILog.logger(.transport)) { transport in
            guard let client = try stored.tokenClient(transport: transport, clientSecretFile: credentials.clientSecretFile),
                client.provider.introspectionEndpoint != nil
            else {
                throw OIDCError(
                    .invalidArgument,
                    "The login of profile '\(storeOptions.profileName)' names no introspection endpoint (the provider's discovery lists none, or the login is older than this version of oidc: log in again)."
                )
            }
            var subject = given ?? refreshToken ?? stored.login.tokens.accessToken
            if given == nil, refreshToken == nil, Token.needsRefresh(stored.login.tokens, idToken: false) {
                // The profile's own access token, refreshed first when it is due, as `oidc token` would print it.
                let session = try stored.session(transport: transport, clientSecretFile: credentials.clientSecretFile, allowlist: HostAllowlist([]))
                subject = try await session.validTokens().accessToken
            }
            return try await client.introspect(subject, hint: tokenTypeHint?.hint)
        }
        // The provider's text, escaped where a terminal would act on it (as every JSON output of oidc).
        Console.output(JSONOutput.safe(JSONValue.object(answer.raw).jsonText))
        if !answer.active { throw ExitCode(ExitCodes.authenticationFailed) }
    }

    private func profileRefreshToken(_ login: StoredLogin) throws -> Secret {
        guard let refresh = login.tokens.refreshToken else {
            throw ValidationError("the login of profile '\(storeOptions.profileName)' has no refresh token; give TOKEN")
        }
        return refresh
    }
}
