import ArgumentParser
import Foundation
import OIDC

/// `oidc login`: a browser login through a loopback redirect, the device flow, or client
/// credentials, stored for `oidc token`.
struct Login: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log in (browser, device code, or client credentials) and store the tokens for later commands.",
        discussion: """
            --flow browser listens on 127.0.0.1 (RFC 8252: a random port unless --listen names one), \
            opens the browser at the provider's sign-in page, checks the callback (state, RFC 9207 \
            iss), exchanges the code with its PKCE verifier, verifies the ID token and stores the \
            tokens under the profile. --flow device (RFC 8628) shows a page and a code to enter on \
            any device, waits for the approval, verifies the ID token and stores the tokens. \
            --flow client-credentials (RFC 6749 §4.4) gets the client's own tokens, no person \
            involved; later commands ask for new ones when they expire. --flow ciba (OpenID CIBA) asks \
            the provider to reach the user named by --login-hint on their own device, then polls \
            (or, with --ciba-mode ping, waits for the provider's notification at \
            --notification-listen) until they approve. --flow auto (the default) \
            is the device flow when no browser is usable here (an SSH session or no display, and \
            no --browser or $BROWSER) and the provider has it, else the browser; with --no-browser, \
            the browser flow, its URL printed to open by hand. Everything but \
            the result goes to stderr; no token is printed.

            The profile remembers every setting given here (never a secret: a client secret only as \
            the path of its file), so 'oidc login --profile work' logs in again and 'oidc token \
            --profile work' needs no other flag.

            Exit codes: 0 logged in, 2 usage or a port in use, 3 timed out or the code expired, 4 \
            the provider refused (access_denied, …) or a check failed, 5 the provider is \
            unreachable, 7 the store failed, 130 Ctrl-C.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @OptionGroup var authorization: AuthorizationOptions

    @Option(help: "The protected resource to log in for (an MCP server's URL): the issuer is found from it (RFC 9728), a client registered when no --client-id is given (RFC 7591, kept per issuer), and every token asked for with resource (RFC 8707). Remembered.")
    var resource: String?

    @Flag(help: "With --resource: register the client anew at the issuer (the new registration replaces the kept one for every profile), for a server that no longer knows it. Not remembered.")
    var newRegistration = false

    @Option(help: "How to sign in: auto (default: device when no browser is usable here, else browser), browser, device, client-credentials, jwt-bearer (with --assertion-file), ciba (approved on the user's own device, with --login-hint). Remembered.")
    var flow: LoginFlowKind?

    @Option(help: "Rich authorization request (RFC 9396): a JSON array of objects each with a type, or @FILE holding one; sent as authorization_details on the authorization request (in the pushed request or the request object when those are used) or on the grant's token request. Not remembered (a client-credentials login asks for it again on renewal).")
    var authorizationDetails: String?

    @Option(help: "With --flow jwt-bearer: a file holding the JWT to present (RFC 7523; a workload identity token), yours and not writable by others; read again whenever new tokens are needed (the path is remembered, not the JWT).")
    var assertionFile: String?

    @Option(help: "With --resource: sign in with the login of this profile at your identity provider, without a browser (MCP enterprise-managed authorization): its ID token is exchanged there for an identity assertion (ID-JAG) for the resource's authorization server, which that server trades for tokens (the JWT bearer grant). Remembered.")
    var identityAssertionFrom: String?

    @Option(help: "With --flow ciba: a short text shown on the user's device and here, so that they can tell this login from another (CIBA binding_message; plain text, at most 256 characters). Not remembered.")
    var bindingMessage: String?

    @Option(help: "With --flow ciba: poll (default: the token endpoint is asked every interval) or ping (the provider notifies --notification-listen, then one token request). Remembered.")
    var cibaMode: CIBAMode?

    @Option(help: "With --ciba-mode ping: where to listen for the provider's notification, 127.0.0.1:PORT or [::1]:PORT (the client's registered backchannel_client_notification_endpoint; port 0 picks one and prints it). Remembered.")
    var notificationListen: String?

    @Option(help: "The device authorization endpoint, for a provider whose discovery document names none (RFC 8628).")
    var deviceAuthorizationEndpoint: String?

    @Flag(help: "Device flow: also draw the link with the code as a QR code, for a phone (needs libqrencode 4).")
    var qr = false

    @Flag(
        inversion: .prefixedNo,
        help: "Browser flow: push the authorization request to the provider first (RFC 9126), so the browser's URL carries only a request_uri. Done anyway when the provider requires it. Remembered."
    )
    var par: Bool?

    @Flag(
        inversion: .prefixedNo,
        help: "Browser flow: send the authorization request as a request object signed with --private-key-file (RFC 9101, JAR). Done anyway when the provider requires it. With --flow ciba, the backchannel request is signed the same way (CIBA Core §7.1.1). Remembered."
    )
    var requestObject: Bool?

    @Flag(
        inversion: .prefixedNo,
        help: "Bind the tokens to a new key of this login (DPoP, RFC 9449): every request then carries a proof, and the key is stored with the tokens. Remembered."
    )
    var dpop: Bool?

    @Flag(
        inversion: .prefixedNo,
        help: "Browser flow: hold the login to the FAPI 2.0 Security Profile: pushed requests, RFC 9207 iss, PS256/ES256/EdDSA ID tokens; refused before anything is sent without --dpop or a client certificate, or with a client secret. Remembered."
    )
    var fapi2: Bool?

    @Flag(
        inversion: .prefixedNo,
        help: "Browser flow: ask for a signed authorization response (JARM, response_mode=jwt) and verify it with the provider's keys before the code is used; a plain code is refused. Remembered."
    )
    var jarm: Bool?

    @OptionGroup var clientAuth: ClientAuthOptions

    @OptionGroup var tls: TLSOptions

    @Option(help: "The client secret (visible to other users in ps: prefer --client-secret-file; never remembered).")
    var clientSecret: String?

    @Option(help: "A file holding the client secret, for confidential clients (the path is remembered, not the secret).")
    var clientSecretFile: String?

    @Option(help: "Where the loopback listener binds: 127.0.0.1:0 (default, any port), [::1]:0, or a fixed port such as 127.0.0.1:8000; repeat to listen on several (the redirect URI names the first).")
    var listen: [String] = []

    @Flag(help: "Do not open a browser; only print the URL to open (--flow auto then takes the browser flow).")
    var noBrowser = false

    @Option(help: "The browser command (default: $BROWSER, then xdg-open, wslview under WSL, open on macOS); the URL is appended, or replaces %s.")
    var browser: String?

    @Option(help: "Seconds to wait for the sign-in (default: 180 for the browser; until the code or request expires for the device flow and CIBA). Each request (discovery, the token endpoint) waits at most OIDC_HTTP_TIMEOUT seconds (default 15), and never past this.")
    var timeout: Int?

    @Flag(help: "Forget the profile's remembered settings and use only the flags given now.")
    var reset = false

    @Option(help: "A host 'oidc request' may send the token to besides the issuer's (.example.com: with its subdomains); repeat for several.")
    var allowHost: [String] = []

    func validate() throws {
        if let timeout, !(1...86_400).contains(timeout) { throw ValidationError("--timeout must be 1 to 86400 seconds") }
        if let deviceAuthorizationEndpoint {
            guard let url = URL(string: deviceAuthorizationEndpoint), url.scheme == "https" || url.scheme == "http" else {
                throw ValidationError("--device-authorization-endpoint needs an https URL, got '\(deviceAuthorizationEndpoint)'")
            }
            do { try EndpointURLPolicy.validate(url, role: "device_authorization_endpoint") } catch {
                throw ValidationError("--device-authorization-endpoint: \(error.message)")
            }
        }
        if clientSecret != nil, clientSecretFile != nil { throw ValidationError("--client-secret-file: give the secret one way, not both") }
        for text in listen {
            do { _ = try LoopbackRedirectListener.Endpoint(parsing: text) } catch { throw ValidationError("--listen: \(error.message)") }
        }
        if let notificationListen {
            do { _ = try LoopbackRedirectListener.Endpoint(parsing: notificationListen) } catch {
                throw ValidationError("--notification-listen: \(error.message)")
            }
        }
        try AllowedHosts.validate(allowHost)
        if authorizationDetails != nil {
            _ = try requestedAuthorizationDetails()
            if try AuthorizationOptions.parseParameters(authorization.parameters).contains(where: { $0.name == "authorization_details" }) {
                throw ValidationError("--param authorization_details=… and --authorization-details: give the details once, with --authorization-details")
            }
        }
        if let resource {
            try ResourceLogin.validate(resource: resource, provider: authorization.provider, parameters: authorization.parameters)
        }
    }

    /// The saved profile with this command's flags laid over it. A login to another provider (another
    /// issuer, preset, environment or client id), or `--reset`, starts from an empty profile: a client secret,
    /// allowed hosts or parameters meant for one provider never go to another.
    func mergedProfile(over saved: Profile?) throws -> Profile {
        var profile = saved ?? Profile()
        let options = authorization
        let kind = options.provider.flatMap { Profile.Kind(rawValue: $0.rawValue) } ?? (options.issuer != nil ? .generic : profile.provider)
        if let saved, reset || kind != saved.provider || (options.issuer != nil && options.issuer != saved.issuer)
            || (options.environment != nil && options.environment != saved.environment) || (options.clientId != nil && options.clientId != saved.clientID)
            || (resource != nil && resource != saved.resource)
        {
            profile = Profile()
        }
        profile.provider = kind
        try profile.lay(self, authorization, clientAuth, tls, storeOptions)
        return profile
    }

    func run() async throws {
        let profiles = try ProfileStore()
        let saved = try profiles.load(storeOptions.profileName)
        let profile = try mergedProfile(over: saved)
        if saved == nil, profile.issuer == nil, profile.resource == nil, profile.provider == .generic {
            throw ValidationError(
                "profile '\(storeOptions.profileName)' is unknown: give --resource URL, or --issuer URL (or --provider schibsted --environment NAME, or --provider swan) and --client-id"
            )
        }
        try AuthorizationOptions.validate(profile)
        guard profile.clientID != nil || profile.resource != nil else { throw ValidationError("--client-id is required") }
        if newRegistration, profile.resource == nil || profile.clientID != nil {
            throw ValidationError("--new-registration is for a client oidc registered for a --resource login (no --client-id)")
        }
        try Self.checkJWTBearer(profile, assertionFileGiven: assertionFile != nil)
        try CIBALogin.check(profile, bindingMessage: bindingMessage, given: (cibaMode != nil, notificationListen != nil))
        if let source = profile.identityAssertionFrom {
            guard profile.resource != nil else {
                throw ValidationError("--identity-assertion-from PROFILE goes with --resource URL: the resource whose authorization server takes the identity assertion")
            }
            guard source != storeOptions.profileName else {
                throw ValidationError("--identity-assertion-from names the profile of your identity provider's login, not the one this login is kept in ('\(source)')")
            }
            if let flow = profile.flow, flow != .auto { throw ValidationError("--identity-assertion-from needs no browser and takes no --flow (\(flow.rawValue) given)") }
        }
        var secret = clientSecret.map(Secret.init)
        if secret == nil, let file = profile.clientSecretFile { secret = try ClientSecretFile.read(file) }
        if profile.provider == .swan, secret == nil {
            throw ValidationError("--provider swan is a confidential client (client_secret_post): give --client-secret-file")
        }
        if clientSecret != nil {
            Console.error("oidc: warning: --client-secret is visible to other users in ps, and is not remembered; later refreshes need --client-secret-file")
        }
        var keychain = try storeOptions.keychain(profile: profile)
        // Before any grant or browser: tokens that cannot be kept are not asked for (F4).
        try LoginReplacement.requireWritable(keychain, profiles: profiles)
        let replacement = LoginReplacement()
        keychain.replacedLogins = replacement.recorder
        var flow = LoginFlow(
            profile: profile, profileName: storeOptions.profileName, clientSecret: secret, timeout: .seconds(timeout ?? 180),
            browser: noBrowser ? .none : .system(command: profile.browser), keychain: keychain,
            key: storeOptions.key
        )
        flow.flow = profile.flow ?? .auto
        // RFC 9396: on this login's requests only (the profile does not remember it).
        if let details = try requestedAuthorizationDetails() { flow.profile.parameters.append(details.parameter) }
        flow.timeoutGiven = timeout != nil
        flow.qr = qr
        flow.bindingMessage = bindingMessage
        flow.identityAssertionSource = profile.identityAssertionFrom.map { StoreSelection(store: storeOptions.selection.store, profile: $0) }
        flow.newRegistration = newRegistration
        flow.dpopRefused = dpop == false
        // A line rewritten in place (`\r ESC[K`) is for a terminal only, and not while `-v` logs to it.
        flow.countdown = logging.level == nil && DevicePrompt.stderrIsTerminal
        flow.environment = BrowserEnvironment(browserCommand: noBrowser ? nil : profile.browser, noBrowser: noBrowser)
        let login = flow
        var bounded = try profile.transportConfiguration()
        // Each request (discovery, the token endpoint): OIDC_HTTP_TIMEOUT, else 15 s, within --timeout.
        bounded.maximumRequestTimeout = try NetworkTimeout.login(loginTimeout: timeout)
        let transportConfiguration = bounded
        let selection = storeOptions.selection, store = keychain, savedProfiles = [profile, saved].compactMap { $0 }
        let (stored, replaced) = try await Interrupt.run {
            try await withNIOHTTPTransport(configuration: transportConfiguration, logger: CLILog.logger(.transport)) { transport in
                let stored = try await login.login(transport: transport)
                // The login this one replaced, read under the lock of the save: its refresh token revoked (F11).
                let note = await replacement.revokeReplaced(by: stored, selection: selection, profiles: savedProfiles, keychain: store, transport: transport)
                return (stored, note)
            }
        }
        // A resource's issuer (trust on first use), and DPoP turned on for a resource that takes
        // only bound tokens: remembered, as --dpop is.
        try profiles.save(profile.remembering(stored), as: storeOptions.profileName)
        if let replaced { Console.error("oidc: \(replaced)") }
        Console.error("oidc: \(Self.summary(stored, profile: storeOptions.profileName))")
    }

    /// `--authorization-details`: the JSON given, or the content of `@FILE` (at most 64 KiB), checked
    /// (an array of objects each with a string `type`); `nil` when not given. A usage error (exit 2)
    /// otherwise, before any request.
    func requestedAuthorizationDetails() throws -> AuthorizationDetails? {
        guard let given = authorizationDetails else { return nil }
        var json = given
        if given.hasPrefix("@") {
            let path = String(given.dropFirst())
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ValidationError("--authorization-details: cannot read \(UntrustedText.sanitized(path, limit: 200))")
            }
            defer { try? handle.close() }
            let bytes = (try? handle.read(upToCount: AuthorizationDetails.sizeLimit + 1)) ?? Data()
            guard bytes.count <= AuthorizationDetails.sizeLimit else {
                throw ValidationError("--authorization-details: \(UntrustedText.sanitized(path, limit: 200)) is over \(AuthorizationDetails.sizeLimit / 1024) KiB")
            }
            json = String(decoding: bytes, as: UTF8.self)
        }
        do { return try AuthorizationDetails(json: json) } catch { throw ValidationError("--authorization-details: \(error.message)") }
    }

    /// `--flow jwt-bearer` needs the issuer that takes the assertion, and a readable assertion file
    /// (this user's, not writable by others: refused before anything is sent); `--assertion-file`
    /// goes with that flow only.
    static func checkJWTBearer(_ profile: Profile, assertionFileGiven: Bool) throws {
        guard profile.flow == .jwtBearer else {
            if assertionFileGiven { throw ValidationError("--assertion-file goes with --flow jwt-bearer") }
            return
        }
        if profile.provider == .generic, profile.issuer == nil {
            throw ValidationError("--flow jwt-bearer needs --issuer URL: the authorization server that takes the assertion (--resource only names what the tokens are for)")
        }
        guard profile.clientID != nil else { throw ValidationError("--flow jwt-bearer needs --client-id") }
        guard let path = profile.assertionFile else {
            throw ValidationError("--flow jwt-bearer needs --assertion-file FILE: the JWT to present (a workload identity token)")
        }
        _ = try AssertionFile.read(path)
    }

    static func summary(_ login: StoredLogin, profile: String) -> String {
        let expiry = login.tokens.expiresAt.map { "the access token expires at \(ExecCredential.rfc3339($0))" } ?? "the access token has no stated expiry"
        if ClientCredentialsRequest(of: login) != nil {
            return "client \(UntrustedText.sanitized(login.clientID)) has its own tokens from \(login.issuer) (profile '\(profile)'); \(expiry)"
        }
        if JWTBearerRequest(of: login) != nil {
            return "client \(UntrustedText.sanitized(login.clientID)) has tokens for its assertion from \(login.issuer) (profile '\(profile)'); \(expiry); no refresh token: the assertion file is presented again when it expires"
        }
        let refresh = login.tokens.refreshToken == nil ? "; no refresh token" : ""
        if let resource = login.resource, login.subject == nil, login.tokens.idToken == nil {
            return "logged in at \(login.issuer) for \(UntrustedText.sanitized(resource)) (profile '\(profile)') with no ID token (a plain OAuth server), so no subject; \(expiry)\(refresh)"
        }
        if let reason = DeviceGrant.missingIDTokenReason(login) {
            return "logged in at \(login.issuer) (profile '\(profile)') with no ID token (\(reason)), so no subject; \(expiry)\(refresh)"
        }
        let subject = UntrustedText.sanitized(login.subject ?? "an unknown subject")
        return "logged in as \(subject) at \(login.issuer) (profile '\(profile)'); \(expiry)\(login.tokens.refreshToken == nil ? "; no refresh token" : "")"
    }
}
