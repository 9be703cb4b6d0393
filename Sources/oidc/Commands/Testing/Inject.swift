import ArgumentParser
import Foundation
import OIDC

/// `oidc inject`: put given tokens into the store, so tests and CI start logged in.
struct Inject: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put tokens into the store as a completed login (for tests and CI).",
        discussion: """
            Give the tokens as an RFC 6749 token response with --token-response FILE (or - for \
            standard input: tokens on the command line are visible to other users in ps), or with \
            --access-token and friends. With --token-endpoint, 'oidc token' can refresh them later.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The issuer the tokens come from.")
    var issuer: String

    @Option(help: "The client id the tokens were issued to.")
    var clientId: String

    @Option(help: "The token endpoint, for later refreshes.")
    var tokenEndpoint: String?

    @Option(help: "The revocation endpoint, for 'oidc logout'.")
    var revocationEndpoint: String?

    @Option(help: "A token response (JSON with access_token, token_type, expires_in, …): a file, or - for standard input.")
    var tokenResponse: String?

    @Option(help: "The access token: the token, @FILE, or - for standard input (prefer --token-response; on the command line it is visible in ps).")
    var accessToken: String?

    @Option(help: "The refresh token: the token, @FILE, or - for standard input.")
    var refreshToken: String?

    @Option(help: "The ID token: the token, @FILE, or - for standard input.")
    var idToken: String?

    @Option(help: "Seconds until the access token expires (negative, as --expires-in -10: already expired); overrides the response's expires_in.")
    var expiresIn: Int?

    @Option(help: "Granted scope values, separated by spaces or the option repeated.")
    var scope: [String] = []

    func validate() throws {
        guard (tokenResponse == nil) != (accessToken == nil) else {
            throw ValidationError("give exactly one of --token-response and --access-token")
        }
        try TokenInput.checkOneStandardInput([
            ("--token-response", tokenResponse), ("--access-token", accessToken), ("--refresh-token", refreshToken), ("--id-token", idToken),
        ])
        if tokenResponse != nil, refreshToken != nil || idToken != nil {
            throw ValidationError("--refresh-token and --id-token go with --access-token, not --token-response")
        }
        for (flag, value) in [("--token-endpoint", tokenEndpoint), ("--revocation-endpoint", revocationEndpoint)] {
            guard let value else { continue }
            guard let url = URL(string: value) else { throw ValidationError("\(flag): '\(value)' is not a URL") }
            do { try EndpointURLPolicy.validate(url, role: flag) } catch { throw ValidationError("\(flag): \(error.message)") }
        }
    }

    func run() async throws {
        let now = CLIClock.now()
        var tokens: TokenSet
        if let tokenResponse {
            let data: Data?
            if tokenResponse == "-" {
                data = FileHandle.standardInput.readData(ofLength: TokenInput.maximumLength + 1)
            } else {
                data = FileManager.default.contents(atPath: tokenResponse)
            }
            guard let data, data.count <= TokenInput.maximumLength else {
                throw ValidationError("--token-response: cannot read '\(tokenResponse)' (or it is over 1 MiB)")
            }
            let requested = try ScopeTokens.parse(scope)
            do { tokens = try TokenSet(tokenAnswer: Array(data), requestedScopes: requested, receivedAt: now) } catch {
                throw ValidationError("--token-response: \(error.message)")
            }
            if let expiresIn { tokens.expiresAt = now.addingTimeInterval(TimeInterval(expiresIn)) }
        } else {
            tokens = TokenSet(
                accessToken: Secret(try TokenInput.secret(accessToken ?? "", flag: "--access-token")),
                refreshToken: try refreshToken.map { Secret(try TokenInput.secret($0, flag: "--refresh-token")) },
                idToken: try idToken.map { Secret(try TokenInput.secret($0, flag: "--id-token")) },
                expiresAt: expiresIn.map { now.addingTimeInterval(TimeInterval($0)) }, scopes: try ScopeTokens.parse(scope), receivedAt: now
            )
        }
        var provider: ProviderConfiguration?
        if tokenEndpoint != nil || revocationEndpoint != nil {
            provider = ProviderConfiguration(issuer: issuer, authorizationEndpoint: nil, tokenEndpoint: tokenEndpoint.flatMap(URL.init(string:)))
            provider?.revocationEndpoint = revocationEndpoint.flatMap(URL.init(string:))
        }
        let subject = tokens.idToken.flatMap { try? UnverifiedJWT($0.revealedValue) }?.claims["sub"]?.stringValue
        let login = StoredLogin(tokens: tokens, issuer: issuer, clientID: clientId, subject: subject, provider: provider)
        // Under the store's lock, like every other writer: a refresh running now cannot overwrite it.
        let keychain = try storeOptions.keychain(profile: try storeOptions.savedProfile())
        let key = storeOptions.key
        try await keychain.withLock(key) { try keychain.save(login, for: key) }
        Console.error("oidc: stored the login of \(subject.map { UntrustedText.sanitized($0) } ?? "an unknown subject") as profile '\(storeOptions.profileName)'")
    }
}
