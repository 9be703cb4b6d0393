import ArgumentParser
import Foundation
import OIDC

/// `oidc exchange`: token exchange (RFC 8693), for scripts that call a service on a user's behalf.
struct Exchange: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exchange a token for another (RFC 8693 token exchange) and print the one issued.",
        discussion: """
            Sends the subject token (and an actor token, when given) to the provider's token \
            endpoint, authenticated as the profile's client, and prints the issued token on stdout \
            (--output json: access_token, issued_token_type, token_type, expires_in, scope (the \
            requested one when the answer names none, RFC 6749 §5.1) and refresh_token). Tokens are read from \
            standard input (-) or a file (@FILE), never from the arguments, which other users see \
            in ps. Without --subject-token, the profile's own access token (refreshed when due).

            Exit codes: 0 issued, 2 usage, 4 the provider refused, 5 the provider is unreachable.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The token to exchange: - for standard input, @FILE for a file (default: the profile's access token).")
    var subjectToken: String?

    @Option(help: "Its type URI (default: urn:ietf:params:oauth:token-type:access_token).")
    var subjectTokenType: String?

    @Option(help: "A token of the party acting for the subject: - or @FILE.")
    var actorToken: String?

    @Option(help: "Its type URI (default, when an actor token is given: …:access_token).")
    var actorTokenType: String?

    @Option(help: "A resource URI the token is for (RFC 8707); repeat for several.")
    var resource: [String] = []

    @Option(help: "A logical name of a service the token is for; repeat for several.")
    var audience: [String] = []

    @Option(help: "Scope values of the token asked for, separated by spaces or the option repeated.")
    var scope: [String] = []

    @Option(help: "The type of token asked for (a token type URI).")
    var requestedTokenType: String?

    @Option(help: "token (default): the issued token; json: the token with issued_token_type, token_type, expires_in, scope, refresh_token.")
    var output: Output = .token

    @OptionGroup var credentials: StoredLoginCredentials

    @OptionGroup var tls: TLSOptions

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case token, json
    }

    func validate() throws {
        for (flag, value) in [("--subject-token", subjectToken), ("--actor-token", actorToken)] {
            if let value, value != "-", !value.hasPrefix("@") {
                throw ValidationError("\(flag) takes - (standard input) or @FILE: a token among the arguments is visible to other users in ps")
            }
        }
        try TokenInput.checkOneStandardInput([("--subject-token", subjectToken), ("--actor-token", actorToken)])
        if actorTokenType != nil, actorToken == nil { throw ValidationError("--actor-token-type goes with --actor-token") }
        _ = try ScopeTokens.parse(scope)
    }

    func run() async throws {
        let stored = try ProfileLogin.load(storeOptions)
        try stored.requireRefreshable(clientSecretFile: credentials.clientSecretFile)
        let given = try subjectToken.map { Secret(try TokenInput.secret($0, flag: "--subject-token")) }
        let actor = try actorToken.map { Secret(try TokenInput.secret($0, flag: "--actor-token")) }
        let configuration = try tls.transportConfiguration(over: stored.boundProfile)
        let result = try await withNIOHTTPTransport(configuration: configuration, logger: CLILog.logger(.transport)) { transport in
            let subject: Secret
            if let given {
                subject = given
            } else {
                let session = try stored.session(transport: transport, clientSecretFile: credentials.clientSecretFile, allowlist: HostAllowlist([]))
                subject = try await session.validTokens(forceRefresh: false).accessToken
            }
            var request = TokenExchangeRequest(subjectToken: subject, subjectTokenType: subjectTokenType ?? TokenExchangeRequest.TokenType.accessToken)
            request.actorToken = actor
            if actor != nil { request.actorTokenType = actorTokenType ?? TokenExchangeRequest.TokenType.accessToken }
            request.resources = resource
            request.audiences = audience
            request.scopes = try ScopeTokens.parse(scope)
            request.requestedTokenType = requestedTokenType
            guard let client = try stored.tokenClient(transport: transport, clientSecretFile: credentials.clientSecretFile) else {
                throw OIDCError(.notLoggedIn, "The login of profile '\(storeOptions.profileName)' names no token endpoint; log in again.")
            }
            return try await client.exchangeToken(request)
        }
        switch output {
        case .token:
            Console.output(result.tokens.accessToken.revealedValue)
        case .json:
            var object: [String: JSONValue] = [
                "access_token": .string(result.tokens.accessToken.revealedValue), "issued_token_type": .string(result.issuedTokenType),
                "token_type": .string(result.tokens.tokenType),
            ]
            if let expiry = result.tokens.expiresAt { object["expires_in"] = .number(max(0, expiry.timeIntervalSince(result.tokens.receivedAt).rounded())) }
            if !result.tokens.scopes.isEmpty { object["scope"] = .string(result.tokens.scopes.joined(separator: " ")) }
            if let refresh = result.tokens.refreshToken { object["refresh_token"] = .string(refresh.revealedValue) }
            Console.output(JSONOutput.safe(JSONValue.object(object).jsonText))
        }
    }
}
