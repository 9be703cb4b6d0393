import ArgumentParser
import Foundation
import OIDC

/// `oidc login`: a browser login through a loopback redirect, stored for `oidc token`.
struct Login: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log in through your browser and store the tokens for later commands.",
        discussion: """
            Listens on 127.0.0.1 (RFC 8252: a random port unless --listen names one), opens the \
            browser at the provider's sign-in page, checks the callback (state, RFC 9207 iss), \
            exchanges the code with its PKCE verifier, verifies the ID token and stores the tokens \
            under the profile. Everything but the result goes to stderr; no token is printed.

            The profile remembers every setting given here (never a secret: a client secret only as \
            the path of its file), so 'oidc login --profile work' logs in again and 'oidc token \
            --profile work' needs no other flag.

            Exit codes: 0 logged in, 2 usage or a port in use, 3 timed out, 4 the provider refused \
            (access_denied, …) or a check failed, 5 the provider is unreachable, 7 the store \
            failed, 130 Ctrl-C.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The issuer URL; its discovery document names the endpoints.")
    var issuer: String?

    @Option(help: "The provider preset: generic (with --issuer), schibsted (with --environment) or swan.")
    var provider: AuthorizeURL.Provider?

    @Option(help: "Schibsted environment: pre, sweden (com), norway (no), finland (fi), denmark (dk), or an https base URL.")
    var environment: String?

    @Option(help: "The client id.")
    var clientId: String?

    @Option(help: "The client secret (visible to other users in ps: prefer --client-secret-file; never remembered).")
    var clientSecret: String?

    @Option(help: "A file holding the client secret, for confidential clients (the path is remembered, not the secret).")
    var clientSecretFile: String?

    @Option(help: "A scope value; repeat for several (default: openid, plus offline_access when the provider offers it).")
    var scope: [String] = []

    @Option(name: .customLong("param"), help: "An extra authorization parameter as name=value; repeat for several.")
    var parameters: [String] = []

    @Option(help: "The prompt (login, consent, select_account, none).")
    var prompt: String?

    @Option(help: "The login_hint.")
    var loginHint: String?

    @Option(help: "The acr_values (generic and Swan; Schibsted uses --mfa).")
    var acrValues: String?

    @Option(help: "The max_age in seconds; the ID token's auth_time is then checked.")
    var maxAge: Int?

    @Option(help: "The ui_locales: preferred languages as space-separated BCP 47 tags.")
    var uiLocales: String?

    @Option(help: "Schibsted multi-factor method: \(Schibsted.MFAMethod.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mfa: String?

    @Option(help: "Where the loopback listener binds: 127.0.0.1:0 (default, any port), [::1]:0, or a fixed port such as 127.0.0.1:8000; repeat to listen on several (the redirect URI names the first).")
    var listen: [String] = []

    @Flag(help: "Do not open a browser; only print the URL to open.")
    var noBrowser = false

    @Option(help: "The browser command (default: $BROWSER, then xdg-open, wslview under WSL, open on macOS); the URL is appended, or replaces %s.")
    var browser: String?

    @Option(help: "Seconds to wait for the sign-in to come back.")
    var timeout: Int = 180

    @Flag(help: "Forget the profile's remembered settings and use only the flags given now.")
    var reset = false

    @Option(help: "A host 'oidc request' may send the token to besides the issuer's (.example.com: with its subdomains); repeat for several.")
    var allowHost: [String] = []

    func validate() throws {
        guard (1...86_400).contains(timeout) else { throw ValidationError("--timeout must be 1 to 86400 seconds") }
        if clientSecret != nil, clientSecretFile != nil { throw ValidationError("--client-secret-file: give the secret one way, not both") }
        if let clientId, clientId.isEmpty { throw ValidationError("--client-id must not be empty") }
        if let maxAge, maxAge < 0 { throw ValidationError("--max-age must be zero or more seconds") }
        if issuer != nil, let provider, provider != .generic { throw ValidationError("--issuer is for --provider generic only") }
        for text in listen {
            do { _ = try LoopbackRedirectListener.Endpoint(parsing: text) } catch { throw ValidationError("--listen: \(error.message)") }
        }
        if let issuer {
            do { _ = try ProviderDiscovery.documentURLs(for: issuer) } catch { throw ValidationError("--issuer: \(error.message)") }
        }
        try AllowedHosts.validate(allowHost)
        if !scope.isEmpty {
            do { _ = try AuthorizationRequest.scopeValue(scope) } catch { throw ValidationError("--scope: \(error.message)") }
        }
    }

    /// The saved profile with this command's flags laid over it. A login to another provider (another
    /// issuer, preset, environment or client id), or `--reset`, starts from an empty profile: a client secret,
    /// allowed hosts or parameters meant for one provider never go to another.
    func mergedProfile(over saved: Profile?) throws -> Profile {
        var profile = saved ?? Profile()
        let kind = provider.flatMap { Profile.Kind(rawValue: $0.rawValue) } ?? (issuer != nil ? .generic : profile.provider)
        if let saved, reset || kind != saved.provider || (issuer != nil && issuer != saved.issuer)
            || (environment != nil && environment != saved.environment) || (clientId != nil && clientId != saved.clientID)
        {
            profile = Profile()
        }
        profile.provider = kind
        if let issuer { profile.issuer = issuer }
        if let environment { profile.environment = environment }
        if let clientId { profile.clientID = clientId }
        if let clientSecretFile { profile.clientSecretFile = Self.absolute(clientSecretFile) }
        if !scope.isEmpty { profile.scopes = scope }
        if !parameters.isEmpty { profile.parameters = try AuthorizeURL.parseParameters(parameters) }
        if let prompt { profile.prompt = prompt }
        if let loginHint { profile.loginHint = loginHint }
        if let acrValues { profile.acrValues = acrValues }
        if let maxAge { profile.maxAge = maxAge }
        if let uiLocales { profile.uiLocales = uiLocales }
        if let mfa { profile.mfa = mfa }
        if !listen.isEmpty { profile.listen = listen }
        if let browser { profile.browser = Self.absoluteCommand(browser) }
        if let store = storeOptions.explicitStore { profile.store = Self.absolute(store) }
        if !allowHost.isEmpty { profile.allowHosts = allowHost.map { $0.lowercased() } }
        return profile
    }

    func run() async throws {
        let profiles = try ProfileStore()
        let saved = try profiles.load(storeOptions.profileName)
        let profile = try mergedProfile(over: saved)
        if saved == nil, profile.issuer == nil, profile.provider == .generic {
            throw ValidationError(
                "profile '\(storeOptions.profileName)' is unknown: give --issuer URL (or --provider schibsted --environment NAME, or --provider swan) and --client-id"
            )
        }
        if profile.provider == .schibsted, profile.environment == nil { throw ValidationError("--environment is required with --provider schibsted") }
        guard profile.clientID != nil else { throw ValidationError("--client-id is required") }
        if profile.provider != .schibsted {
            if profile.environment != nil { throw ValidationError("--environment is for --provider schibsted only") }
            if profile.mfa != nil { throw ValidationError("--mfa is for --provider schibsted only; use --acr-values") }
        } else if profile.acrValues != nil {
            throw ValidationError("--acr-values is not for Schibsted; use --mfa")
        }
        var secret = clientSecret.map(Secret.init)
        if secret == nil, let file = profile.clientSecretFile { secret = try ClientSecretFile.read(file) }
        if profile.provider == .swan, secret == nil {
            throw ValidationError("--provider swan is a confidential client (client_secret_post): give --client-secret-file")
        }
        if clientSecret != nil {
            Console.error("oidc: warning: --client-secret is visible to other users in ps, and is not remembered; later refreshes need --client-secret-file")
        }
        let flow = LoginFlow(
            profile: profile, profileName: storeOptions.profileName, clientSecret: secret, timeout: .seconds(timeout),
            browser: noBrowser ? .none : .system(command: profile.browser), keychain: try storeOptions.keychain(profile: profile),
            key: storeOptions.key
        )
        let outcome = try await Interrupt.run {
            try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in try await flow.run(transport: transport) }
        }
        try profiles.save(profile, as: storeOptions.profileName)
        Console.error("oidc: \(Self.summary(outcome.stored, profile: storeOptions.profileName))")
    }

    static func summary(_ login: StoredLogin, profile: String) -> String {
        let expiry = login.tokens.expiresAt.map { "the access token expires at \(ExecCredential.rfc3339($0))" } ?? "the access token has no stated expiry"
        let subject = Display.sanitized(login.subject ?? "an unknown subject")
        return "logged in as \(subject) at \(login.issuer) (profile '\(profile)'); \(expiry)\(login.tokens.refreshToken == nil ? "; no refresh token" : "")"
    }

    /// A browser command whose program is a relative path (`./open.sh`) is remembered with the
    /// current directory, so a later login from elsewhere does not run another directory's file.
    private static func absoluteCommand(_ command: String) -> String {
        let trimmed = command.drop(while: \.isWhitespace)
        guard let program = trimmed.split(separator: " ").first, program.contains("/"), !program.hasPrefix("/") else { return command }
        return absolute(String(program)) + trimmed.dropFirst(program.count)
    }

    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
