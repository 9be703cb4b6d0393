import ArgumentParser
import Foundation
import OIDC

/// One login, shared by `oidc login` and `oidc demo`: the profile's provider as a ``RelyingParty``
/// (discovery or a preset), then the flow `--flow` names (or `auto` picks): a browser through its
/// ``LoopbackLogin`` (listener on 127.0.0.1 → browser → callback checked → code exchanged → ID
/// token verified), the device flow (LoginFlow+Device.swift) or client credentials
/// (LoginFlow+ClientCredentials.swift); the result kept under the store's lock. What is here is the
/// profile-to-login mapping and the console's messages.
struct LoginFlow {
    enum BrowserChoice {
        /// Print the URL only.
        case none
        /// `--browser CMD`, else `$BROWSER`, `xdg-open`/`wslview`, `open`.
        case system(command: String?)
        case custom(any BrowserLauncher)
    }

    struct Outcome {
        let stored: StoredLogin
        /// The ID token the login was completed with, verified.
        let idToken: IDToken
        let relyingParty: RelyingParty
        /// From the valid callback (or the approval) to the stored login.
        let callbackToStored: Duration
    }

    var profile: Profile
    var profileName: String
    var clientSecret: Secret?
    var timeout: Duration
    var browser: BrowserChoice
    var keychain: FileKeychain
    var key: TokenStoreKey
    /// `--flow`: `auto` picks the device flow when no browser is usable here.
    var flow: LoginFlowKind = .browser
    /// Whether `--timeout` was given: the device flow then waits no longer; without it, until the codes expire.
    var timeoutGiven = true
    /// `--new-registration`: a `--resource` login registers its client anew instead of using the kept registration.
    var newRegistration = false
    /// `--no-dpop` given: a `--resource` login for a resource that takes only DPoP-bound tokens is
    /// refused (exit 2) instead of turning DPoP on.
    var dpopRefused = false
    /// `--identity-assertion-from`: the identity provider's login whose ID token becomes an ID-JAG.
    var identityAssertionSource: StoreSelection?
    /// `--binding-message`: what a CIBA login's user sees on their device (not remembered).
    var bindingMessage: String?
    /// `--qr`: the device flow's link as a QR code too.
    var qr = false
    /// Whether the console shows a line that counts down: only when stderr is a terminal, and not
    /// while `-v` logs to it. Otherwise no line carries `\r ESC[K`.
    var countdown = true
    /// The environment `auto` decides by.
    var environment = BrowserEnvironment(browserCommand: nil)

    /// A browser login (`oidc demo`'s).
    func run(transport: NIOHTTPTransport) async throws -> Outcome {
        try await browserLogin(try await relyingParty(transport: transport))
    }

    /// The login `flow` names, or `auto` picks once the provider is known; the stored login.
    func login(transport: NIOHTTPTransport) async throws -> StoredLogin {
        // FAPI 2.0 holds the authorization code flow: auto takes the browser, and the other flows,
        // which the profile does not cover, are refused (before discovery) rather than run as if
        // they were held to it.
        if profile.fapi2, flow == .device || flow == .clientCredentials || flow == .jwtBearer || flow == .ciba {
            throw ValidationError(
                "--fapi2 holds browser logins (the authorization code flow) to the FAPI 2.0 Security Profile; --flow \(flow.rawValue) is outside it. Use --flow browser, or leave out --fapi2 (oidc login --no-fapi2 forgets it).")
        }
        if let source = identityAssertionSource { return try await identityAssertionLogin(from: source, transport: transport) }
        let rp = try await relyingParty(transport: transport)
        let chosen = profile.fapi2 ? .browser : environment.resolve(flow, providerHasDeviceEndpoint: rp.provider.deviceAuthorizationEndpoint != nil)
        if flow == .auto, chosen == .device { Console.error("oidc: \(environment.reason): signing in with the device flow") }
        switch chosen {
        case .clientCredentials: return try await clientCredentialsLogin(rp)
        case .jwtBearer: return try await jwtBearerLogin(rp)
        case .ciba: return try await cibaLogin(rp)
        case .device:
            if rp.protectedResource != nil { return try await resourceLogin(rp) { rp in try await deviceLogin(rp) } }
            return try await deviceLogin(rp)
        case .browser, .auto:
            // A resource's login: at a plain OAuth server without an ID token, a refused registration made anew.
            if rp.protectedResource != nil { return try await resourceBrowserLogin(rp) }
            return try await browserLogin(rp).stored
        }
    }

    /// The browser login through the loopback listener.
    func browserLogin(_ rp: RelyingParty) async throws -> Outcome {
        let profile = self.profile
        if rp.provider.requiresSignedRequestObjects, rp.configuration.frontChannel.requestObjectKey == nil {
            throw ValidationError(
                "\(rp.provider.issuer) takes only signed request objects (RFC 9101): give --client-auth private_key_jwt --private-key-file FILE (the key it has registered for this client); --request-object then signs with it")
        }
        // Every clash of the settings is a usage error before a port is opened.
        _ = try Profile.checkedRequest {
            try rp.authorizationRequest(redirectURI: "http://127.0.0.1/callback", scopes: scopes) { request throws(OIDCError) in
                try profile.configure(&request)
            }
        }
        var login = rp.loopbackLogin(scopes: scopes)
        login.listener = LoopbackRedirectListener.Configuration(endpoints: try listenEndpoints())
        login.logger = CLILog.logger(.loopback)
        login.timeout = timeout
        login.browser = launcher()
        login.configure = { request throws(OIDCError) in try profile.configure(&request) }
        let callback = CallbackClock()
        login.onProgress = { progress in
            switch progress {
            case .browserFailed(let error): Console.error("oidc: \(error.message) Open the URL above yourself.")
            case .callbackReceived: callback.mark()
            }
        }
        let timeout = self.timeout
        let completed = try await login.runLogin { start in
            Console.error("oidc: sign in at \(rp.provider.issuer) in your browser: \(start.absoluteString)")
            Console.error("oidc: waiting for the browser to come back to \(Self.callback(of: start)) (for \(timeout.components.seconds) s; Ctrl-C to cancel)")
        }
        // An OpenID login (a resource's plain OAuth one goes through resourceBrowserLogin): verified.
        guard let idToken = completed.idToken else { throw OIDCError(.missingParameter, "The provider's login completed without a verified ID token.") }
        return try await keep(completed, idToken: idToken, rp, since: callback)
    }

    /// Stores `login` under the store's lock, with the profile's attributes.
    func keep(_ login: StoredLogin, idToken: IDToken, _ rp: RelyingParty, since clock: CallbackClock) async throws -> Outcome {
        var login = login
        login.attributes.merge(attributes) { _, profile in profile }
        let stored = try await rp.save(login, in: keychain, as: key)
        return Outcome(stored: stored, idToken: idToken, relyingParty: rp, callbackToStored: clock.elapsed)
    }

    /// What the CLI keeps with a login: its preset and profile.
    var attributes: [String: String] {
        StoredProvider.attributes(kind: profile.provider, environment: profile.environment, profile: profileName)
    }

    /// The callback URL of the listener whose start URL is `start`.
    static func callback(of start: URL) -> String {
        "\(start.scheme ?? "http")://\(start.host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "127.0.0.1"):\(start.port ?? 80)/callback"
    }

    func listenEndpoints() throws -> [LoopbackRedirectListener.Endpoint] {
        guard !profile.listen.isEmpty else { return [.ipv4] }
        return try profile.listen.map { text in
            do throws(OIDCError) { return try LoopbackRedirectListener.Endpoint(parsing: text) } catch {
                throw ValidationError("--listen: \(error.message)")
            }
        }
    }

    /// The browser to open the start URL with; `nil` prints it only (and says why when there is
    /// no browser here).
    func launcher() -> (any BrowserLauncher)? {
        switch browser {
        case .none:
            return nil
        case .system(let command):
            let system = SystemBrowser(command: command)
            guard system.isAvailable else {
                Console.error("oidc: no browser to open here (no --browser, no $BROWSER, no display); open the URL above in a browser on this machine")
                return nil
            }
            return system
        case .custom(let custom):
            return custom
        }
    }
}

/// When the valid callback came, for the time from there to the stored login.
final class CallbackClock: @unchecked Sendable {
    private let lock = NSLock()
    private var received: ContinuousClock.Instant?

    func mark() { lock.withLock { received = ContinuousClock.now } }

    var elapsed: Duration { lock.withLock { received.map { ContinuousClock.now - $0 } ?? .zero } }
}
