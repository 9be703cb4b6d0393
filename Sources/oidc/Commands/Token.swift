import ArgumentParser
import Foundation
import OIDC

/// `oidc token`: a valid access token for scripts, refreshed when needed.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a valid access token of a stored login, refreshed if it is about to expire.",
        discussion: """
            The hot path of scripts: $(oidc token). A token valid for at least another minute is \
            printed straight from the store. Otherwise it is refreshed under the store's lock, so \
            several oidc processes at once spend a rotating refresh token only once. A refresh the \
            provider rejects logs the login out (exit 4); an unreachable provider exits 5 and keeps it.
            """
    )

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case token, json
        case idToken = "id-token"
    }

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "What to print: token (the access token), json, or id-token.")
    var output: Output = .token

    @Flag(help: "Refresh even if the token is still valid.")
    var forceRefresh = false

    @Option(help: "A file holding the client secret, for confidential clients.")
    var clientSecretFile: String?

    func run() async throws {
        let keychain = try storeOptions.keychain()
        let key = storeOptions.key
        guard let login = try keychain.load(key) else {
            throw OIDCError(.notLoggedIn, "No login is stored as profile '\(storeOptions.profileName)'; log in first (oidc login, or oidc inject in tests).")
        }
        // The fast path: a fresh token straight from the store, no network, no event loop.
        if !forceRefresh, !login.tokens.needsRefresh(margin: 60) {
            try print(login.tokens, login: login)
            return
        }
        guard let endpoint = login.attributes["token_endpoint"].flatMap(URL.init(string:)) else {
            throw OIDCError(
                .notLoggedIn, "The token of profile '\(storeOptions.profileName)' expired and the login names no token endpoint to refresh it; log in again."
            )
        }
        var secret: Secret?
        if let clientSecretFile {
            guard let data = FileManager.default.contents(atPath: clientSecretFile) else {
                throw ValidationError("--client-secret-file: cannot read '\(clientSecretFile)'")
            }
            secret = Secret(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var provider = ProviderConfiguration(
            issuer: login.issuer, authorizationEndpoint: URL(string: login.issuer) ?? endpoint, tokenEndpoint: endpoint,
            clientAuthentication: secret == nil ? .none : .clientSecretBasic
        )
        provider.revocationEndpoint = login.attributes["revocation_endpoint"].flatMap(URL.init(string:))
        let transport = NIOHTTPTransport()
        let session = AuthenticatedSession(
            store: keychain, key: key,
            source: .refreshToken(TokenClient(provider: provider, clientID: login.clientID, clientSecret: secret, transport: transport)),
            transport: transport, allowlist: HostAllowlist([])
        )
        let result: Result<TokenSet, OIDCError>
        do { result = .success(try await session.validTokens(forceRefresh: forceRefresh)) } catch { result = .failure(error) }
        try? await transport.shutdown()
        let tokens = try result.get()
        try print(tokens, login: try await session.login ?? login)
        if let problem = await session.storageProblem {
            // The token printed works, but the store still holds the spent refresh token.
            Console.error("oidc: error: the refreshed tokens could not be stored: \(problem.description)")
            throw ExitCode(ExitCodes.storage)
        }
    }

    private func print(_ tokens: TokenSet, login: StoredLogin) throws {
        switch output {
        case .token:
            Console.output(tokens.accessToken.revealedValue)
        case .idToken:
            guard let idToken = tokens.idToken else {
                throw OIDCError(.missingParameter, "The login of profile '\(storeOptions.profileName)' has no ID token.")
            }
            Console.output(idToken.revealedValue)
        case .json:
            var object: [String: Any] = [
                "access_token": tokens.accessToken.revealedValue, "token_type": tokens.tokenType, "issuer": login.issuer,
                "client_id": login.clientID, "scope": tokens.scopes.joined(separator: " "),
            ]
            object["expires_at"] = tokens.expiresAt.map { Int64($0.timeIntervalSince1970) }
            object["id_token"] = tokens.idToken?.revealedValue
            object["subject"] = login.subject
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            Console.output(String(decoding: data, as: UTF8.self))
        }
    }
}
