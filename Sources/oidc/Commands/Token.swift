import ArgumentParser
import Foundation
import OIDC

/// `oidc token`: a valid access token for scripts and kubectl, refreshed when needed.
struct Token: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a valid token of a stored login, refreshed if it is about to expire.",
        discussion: """
            The hot path of scripts: $(oidc token). A token valid for at least another minute (one \
            issued for less than two minutes: for half its lifetime) is printed straight from the \
            store, without the network. Otherwise it is refreshed under the store's lock, so several \
            oidc processes at once spend a rotating refresh token only once. A refresh the provider \
            rejects ends the login and says so (exit 4); an unreachable provider exits 5 and keeps \
            it; a store with no room for the answer exits 7 before anything is sent, and keeps it.

            --output exec-credential prints a client-go ExecCredential for kubectl \
            (client.authentication.k8s.io/v1 or v1beta1, as KUBERNETES_EXEC_INFO asks; v1beta1 \
            when it is unset) carrying the ID token, which Kubernetes' OIDC authenticator verifies \
            (--token-type access for the access token).

            --output header prints one line, 'Authorization: Bearer TOKEN', for hosts that run a \
            header helper command (an MCP host, git's http.extraHeader, curl -H @-). A DPoP-bound \
            login prints 'Authorization: DPoP TOKEN' and says on stderr that every request also \
            needs its own proof (oidc proof), which a header helper cannot make.
            """
    )

    @OptionGroup var logging: LoggingOptions

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case token, json
        case execCredential = "exec-credential"
        case idToken = "id-token"
        case header
        /// The login's `authorization_details` (RFC 9396), as JSON.
        case authorizationDetails = "authorization-details"
    }

    enum TokenType: String, ExpressibleByArgument, CaseIterable {
        case id, access
    }

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "What to print: token (the access token), json, exec-credential (kubectl), id-token, header (one line: 'Authorization: Bearer TOKEN', or DPoP), or authorization-details (what the tokens were granted for, RFC 9396, as a JSON array).")
    var output: Output = .token

    @Option(help: "With --output exec-credential: which token kubectl gets, id (default when there is one) or access.")
    var tokenType: TokenType?

    @Flag(help: "Refresh even if the token is still valid.")
    var forceRefresh = false

    @OptionGroup var credentials: StoredLoginCredentials

    @OptionGroup var tls: TLSOptions

    @Option(help: "Seconds to wait for the token endpoint when a refresh is needed (default: $OIDC_HTTP_TIMEOUT, else 10).")
    var timeout: Int?

    /// kubectl and scripts wait on `oidc token`: a hung provider is said in 10 s, not 30.
    static let defaultTimeout = 10

    static let margin: TimeInterval = 60

    func validate() throws {
        if tokenType != nil, output != .execCredential { throw ValidationError("--token-type goes with --output exec-credential") }
        _ = try NetworkTimeout.seconds(flag: timeout, default: Self.defaultTimeout)
    }

    func run() async throws {
        let execVersion = output == .execCredential ? try ExecCredential.requestedVersion() : nil
        let stored = try ProfileLogin.load(storeOptions)
        let wantsIDToken = Self.wantsIDToken(output: output, tokenType: tokenType, tokens: stored.login.tokens)
        // A fresh token straight from the store; no network, no event loop. (FastPath answers this
        // case before the argument parser runs; this is the same answer for the other spellings.)
        if !forceRefresh, !Self.needsRefresh(stored.login.tokens, idToken: wantsIDToken) {
            try Self.emit(stored.login, output: output, wantsIDToken: wantsIDToken, execVersion: execVersion, profile: storeOptions.profileName)
            return
        }
        // Before a refresh spends the refresh token for a credential that would be refused anyway.
        if output == .execCredential, !wantsIDToken { try Self.refuseBoundTokenForKubectl(stored.login.tokens, profile: storeOptions.profileName) }
        try stored.requireRefreshable(clientSecretFile: credentials.clientSecretFile)
        var configuration = try tls.transportConfiguration(over: stored.boundProfile)
        configuration.maximumRequestTimeout = .seconds(try NetworkTimeout.seconds(flag: timeout, default: Self.defaultTimeout))
        let transport = NIOHTTPTransport(configuration: configuration, logger: CLILog.logger(.transport))
        let outcome: Result<(StoredLogin, OIDCError?), any Error>
        do {
            let session = try stored.session(transport: transport, clientSecretFile: credentials.clientSecretFile, allowlist: HostAllowlist([]))
            var tokens = try await session.validTokens(forceRefresh: forceRefresh)
            // The access token may be fresh while the ID token kubectl needs has expired.
            if wantsIDToken, Self.needsRefresh(tokens, idToken: true), !forceRefresh {
                tokens = try await session.validTokens(forceRefresh: true)
            }
            var login = try await session.login ?? stored.login
            login.tokens = tokens
            outcome = .success((login, await session.storageProblem))
        } catch {
            outcome = .failure(error)
        }
        try? await transport.shutdown()
        let (login, storageProblem) = try outcome.get()
        try Self.emit(login, output: output, wantsIDToken: wantsIDToken, execVersion: execVersion, profile: storeOptions.profileName)
        if let storageProblem {
            // The token printed works, but the store still holds the refresh token this refresh replaced.
            Console.error("oidc: error: \(Self.unstored(storageProblem, profile: stored))")
            throw ExitCode(ExitCodes.storage)
        }
    }

    /// What a refresh whose answer the store refused means: the token printed works; the stored
    /// refresh token is the one replaced, which a rotating provider refuses next time.
    static func unstored(_ problem: OIDCError, profile stored: ProfileLogin) -> String {
        "the refreshed tokens could not be stored: \(problem.description) The token printed works until it expires, but the store still holds the refresh token this refresh replaced: a provider that rotates refresh tokens refuses it, and the login then ends (log in again with: \(stored.loginAgain))."
    }

    /// Whether the output is the ID token: `--output id-token`, or kubectl's credential unless it
    /// asks for the access token or the login has no ID token.
    static func wantsIDToken(output: Output, tokenType: TokenType?, tokens: TokenSet) -> Bool {
        output == .idToken || (output == .execCredential && (tokenType ?? (tokens.idToken == nil ? .access : .id)) == .id)
    }

    /// Whether the access token (or, for kubectl, the ID token) expires within the margin: 60 s, or
    /// half the access token's lifetime when that is shorter (``TokenSet/needsRefresh(at:margin:)``).
    static func needsRefresh(_ tokens: TokenSet, idToken: Bool) -> Bool {
        if tokens.needsRefresh(at: CLIClock.now(), margin: margin) { return true }
        guard idToken, let expiry = idTokenExpiry(tokens) else { return false }
        return expiry.timeIntervalSince(CLIClock.now()) < margin
    }

    /// The stored ID token's `exp`, within the years 1 to 9999 as the verifier bounds it: a login
    /// verified it when it was stored, but `oidc inject` and an edited store did not.
    static func idTokenExpiry(_ tokens: TokenSet) -> Date? {
        guard let token = tokens.idToken, let exp = (try? UnverifiedJWT(token.revealedValue))?.claims["exp"]?.numberValue else {
            return nil
        }
        return Date(timeIntervalSince1970: DateRange.clamped(exp))
    }

    /// kubectl sends its token as a bearer token, with no proof: a DPoP-bound access token is refused.
    static func refuseBoundTokenForKubectl(_ tokens: TokenSet, profile: String) throws {
        guard tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame else { return }
        throw OIDCError(
            .invalidArgument,
            "The access token of profile '\(profile)' is DPoP-bound, and kubectl sends it without a DPoP proof, so the API server would refuse it; give kubectl the ID token (--token-type id), or log in without --dpop for kubectl.",
            context: ["profile": profile, "token_type": "DPoP"]
        )
    }

    /// Prints what `output` asks for, from `login` as it is.
    static func emit(_ login: StoredLogin, output: Output, wantsIDToken: Bool, execVersion: String?, profile: String) throws {
        let tokens = login.tokens
        let idToken: Secret?
        if wantsIDToken {
            guard let token = tokens.idToken else {
                // What gives the access token instead, for this output.
                let instead = output == .execCredential ? "use --token-type access" : "use oidc token --profile \(profile) (the access token)"
                if login.subject == nil, login.resource != nil {
                    throw OIDCError(
                        .missingParameter,
                        "The login of profile '\(profile)' has no ID token: it was made at a plain OAuth server (found from its resource, RFC 8414), which issues none; \(instead).")
                }
                if let reason = DeviceGrant.missingIDTokenReason(login) {
                    throw OIDCError(.missingParameter, "The login of profile '\(profile)' has no ID token (\(reason)); \(instead).")
                }
                throw OIDCError(.missingParameter, "The login of profile '\(profile)' has no ID token; \(instead), or log in with the openid scope.")
            }
            if let expiry = Self.idTokenExpiry(tokens), expiry <= CLIClock.now() {
                throw OIDCError(
                    .notLoggedIn,
                    "The ID token of profile '\(profile)' has expired and the provider sent no new one with the refresh; log in again (or use --token-type access).",
                    context: ["profile": profile]
                )
            }
            idToken = token
        } else {
            idToken = nil
        }
        switch output {
        case .token:
            Console.output(tokens.accessToken.revealedValue)
        case .idToken:
            Console.output(idToken?.revealedValue ?? "")
        case .header:
            try AuthorizationHeaderLine.emit(login, profile: profile)
        case .authorizationDetails:
            guard let details = tokens.authorizationDetails else {
                throw OIDCError(
                    .missingParameter,
                    "The login of profile '\(profile)' has no authorization_details: the provider granted none with its tokens (log in with --authorization-details to ask for them, RFC 9396).",
                    context: ["profile": profile])
            }
            // The provider's JSON, terminal controls escaped.
            Console.output(JSONOutput.safe(details.jsonText))
        case .execCredential:
            if idToken == nil { try refuseBoundTokenForKubectl(tokens, profile: profile) }
            let token = idToken ?? tokens.accessToken
            let expiry = idToken != nil ? idTokenExpiry(tokens) : tokens.expiresAt
            Console.output(try ExecCredential.json(version: execVersion ?? ExecCredential.v1beta1, token: token, expiresAt: expiry))
        case .json:
            var object: [String: Any] = [
                "access_token": tokens.accessToken.revealedValue, "token_type": tokens.tokenType, "issuer": login.issuer,
                "client_id": login.clientID, "scope": tokens.scopes.joined(separator: " "),
            ]
            object["expires_at"] = tokens.expiresAt.map(DateRange.unixSeconds)
            object["id_token"] = tokens.idToken?.revealedValue
            object["subject"] = login.subject
            object["authorization_details"] = tokens.authorizationDetails.flatMap { try? JSONSerialization.jsonObject(with: Data($0.jsonText.utf8)) }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            // The scope and subject as the provider sent them, terminal controls escaped (review 3, L3).
            Console.output(JSONOutput.safe(String(decoding: data, as: UTF8.self)))
        }
    }
}
