import ArgumentParser
import Foundation
import OIDC

/// One browser login, shared by `oidc login` and `oidc demo`: the profile's provider as a
/// ``RelyingParty`` (discovery or a preset), then its ``LoopbackLogin`` (listener on 127.0.0.1 →
/// browser → callback checked → code exchanged → ID token verified), kept under the store's lock.
/// What is here is the profile-to-login mapping and the console's messages.
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
        let verified: VerifiedLogin
        let relyingParty: RelyingParty
        /// From the valid callback to the stored login.
        let callbackToStored: Duration
    }

    var profile: Profile
    var profileName: String
    var clientSecret: Secret?
    var timeout: Duration
    var browser: BrowserChoice
    var keychain: FileKeychain
    var key: TokenStoreKey

    func run(transport: NIOHTTPTransport) async throws -> Outcome {
        let rp = try await relyingParty(transport: transport)
        let profile = self.profile
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
        let verified = try await login.run { start in
            let redirect = "\(start.scheme ?? "http")://\(start.host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "127.0.0.1"):\(start.port ?? 80)/callback"
            Console.error("oidc: sign in at \(rp.provider.issuer) in your browser: \(start.absoluteString)")
            Console.error("oidc: waiting for the browser to come back to \(redirect) (for \(timeout.components.seconds) s; Ctrl-C to cancel)")
        }
        let attributes = StoredProvider.attributes(kind: profile.provider, environment: profile.environment, profile: profileName)
        _ = try await rp.keep(verified, in: keychain, as: key, allowlist: HostAllowlist([]), attributes: attributes)
        let stored = StoredLogin(verified, attributes: attributes)
        return Outcome(stored: stored, verified: verified, relyingParty: rp, callbackToStored: callback.elapsed)
    }

    /// The scopes asked for: the profile's, or the provider's defaults (`openid`, and
    /// `offline_access` when offered; a preset's own) when it names none.
    private var scopes: [String]? { profile.scopes.isEmpty ? nil : profile.scopes }

    /// The profile's provider as a relying party, each part logging under its own label.
    private func relyingParty(transport: NIOHTTPTransport) async throws -> RelyingParty {
        guard let clientID = profile.clientID, !clientID.isEmpty else { throw ValidationError("--client-id is required") }
        let provider = try await resolveProvider(transport: transport)
        let client = TokenClient(
            provider: provider, clientID: clientID, clientSecret: clientSecret, transport: transport, logger: CLILog.logger(.token)
        )
        let keys = provider.jwksURI.map { JWKSCache(transport: transport, jwksURI: $0, logger: CLILog.logger(.jwks)) }
        return RelyingParty(tokenClient: client, keys: keys, logger: CLILog.logger(.session))
    }

    /// The provider: the Schibsted preset as it is; Swan's preset over its discovered metadata;
    /// any other issuer's metadata (a confidential client authenticating as the provider allows).
    private func resolveProvider(transport: NIOHTTPTransport) async throws -> ProviderConfiguration {
        let discovery = ProviderDiscovery(
            transport: transport, requestOptions: HTTPRequestOptions(timeout: .seconds(15)), logger: CLILog.logger(.discovery)
        )
        switch profile.provider {
        case .schibsted:
            guard let name = profile.environment, let environment = Schibsted.Environment(name: name) else {
                throw ValidationError("--environment: give pre, sweden, norway, finland, denmark or an https base URL for --provider schibsted")
            }
            var configuration = ProviderConfiguration.schibsted(environment)
            if clientSecret != nil { configuration.clientAuthentication = .clientSecretBasic }
            return configuration
        case .swan:
            let swan = ProviderConfiguration.swan
            return swan.merging(try await discovery.metadata(for: swan.issuer))
        case .generic:
            guard let issuer = profile.issuer else { throw ValidationError("--issuer is required (or --provider schibsted|swan)") }
            let metadata = try await discovery.metadata(for: issuer)
            return try metadata.configuration(confidential: clientSecret != nil, defaultScopes: metadata.defaultLoginScopes)
        }
    }

    private func listenEndpoints() throws -> [LoopbackRedirectListener.Endpoint] {
        guard !profile.listen.isEmpty else { return [.ipv4] }
        return try profile.listen.map { text in
            do throws(OIDCError) { return try LoopbackRedirectListener.Endpoint(parsing: text) } catch {
                throw ValidationError("--listen: \(error.message)")
            }
        }
    }

    /// The browser to open the start URL with; `nil` prints it only (and says why when there is
    /// no browser here).
    private func launcher() -> (any BrowserLauncher)? {
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
private final class CallbackClock: @unchecked Sendable {
    private let lock = NSLock()
    private var received: ContinuousClock.Instant?

    func mark() { lock.withLock { received = ContinuousClock.now } }

    var elapsed: Duration { lock.withLock { received.map { ContinuousClock.now - $0 } ?? .zero } }
}
