import ArgumentParser
import Foundation
import OIDC

/// One browser login through the loopback redirect (RFC 8252), shared by `oidc login` and
/// `oidc demo`: provider (discovery or preset) → listener on 127.0.0.1 → browser → callback checked
/// (state, RFC 9207 iss, provider error) → code exchange with the PKCE verifier → ID token verified →
/// login stored under the store's lock.
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
        let provider: ProviderConfiguration
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
        let (provider, defaultScopes) = try await resolveProvider(transport: transport)
        let endpoints = try listenEndpoints()
        let listener = try await LoopbackRedirectListener.start(.init(endpoints: endpoints), logger: CLILog.logger(.loopback))
        let request: AuthorizationRequest
        do { request = try makeRequest(provider: provider, defaultScopes: defaultScopes, redirectURI: listener.redirectURI) } catch {
            await listener.close()
            throw error
        }
        do { try listener.serve(request) } catch {
            await listener.close()
            throw error
        }
        Console.error("oidc: sign in at \(provider.issuer) in your browser: \(listener.startURL.absoluteString)")
        Console.error("oidc: waiting for the browser to come back to \(listener.redirectURI) (for \(timeout.components.seconds) s; Ctrl-C to cancel)")
        await openBrowser(listener.startURL)
        let response = try await listener.waitForAuthorization(request, timeout: timeout)
        let clock = ContinuousClock()
        let start = clock.now
        let client = TokenClient(
            provider: provider, clientID: request.clientID, clientSecret: clientSecret, transport: transport, logger: CLILog.logger(.token)
        )
        guard let jwksURI = provider.jwksURI else {
            throw OIDCError(.missingParameter, "The provider names no jwks_uri, so the ID token cannot be verified; nothing was stored.")
        }
        let verified = try await client.completeLogin(response, for: request, keys: JWKSCache(transport: transport, jwksURI: jwksURI, logger: CLILog.logger(.jwks)))
        var login = StoredLogin(
            verified, clientID: request.clientID,
            attributes: StoredProvider.attributes(of: provider, kind: profile.provider, environment: profile.environment, profile: profileName)
        )
        login.issuer = provider.issuer  // as configured (Schibsted's may differ from iss by a trailing slash)
        let stored = login
        let keychain = self.keychain, key = self.key
        try await keychain.withLock(key) { try keychain.save(stored, for: key) }
        return Outcome(stored: stored, verified: verified, provider: provider, callbackToStored: clock.now - start)
    }

    /// The provider and the scopes asked for when the profile names none.
    private func resolveProvider(transport: NIOHTTPTransport) async throws -> (ProviderConfiguration, [String]) {
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
            return (configuration, configuration.defaultScopes)
        case .swan:
            // The preset's endpoints; the keys and the revocation endpoint come from Swan's metadata.
            var configuration = ProviderConfiguration.swan
            let metadata = try await discovery.metadata(for: configuration.issuer)
            configuration.jwksURI = metadata.jwksURI
            configuration.revocationEndpoint = metadata.revocationEndpoint
            configuration.userinfoEndpoint = metadata.userinfoEndpoint
            return (configuration, configuration.defaultScopes)
        case .generic:
            guard let issuer = profile.issuer else { throw ValidationError("--issuer is required (or --provider schibsted|swan)") }
            let metadata = try await discovery.metadata(for: issuer)
            // offline_access brings a refresh token from providers that need it asked (OIDC Core §11).
            let offline = metadata.scopesSupported?.contains("offline_access") == true ? ["offline_access"] : []
            return (try metadata.configuration(confidential: clientSecret != nil, defaultScopes: ["openid"] + offline), ["openid"] + offline)
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

    private func makeRequest(provider: ProviderConfiguration, defaultScopes: [String], redirectURI: String) throws -> AuthorizationRequest {
        guard let clientID = profile.clientID, !clientID.isEmpty else { throw ValidationError("--client-id is required") }
        var request: AuthorizationRequest
        do {
            if profile.provider == .schibsted, let name = profile.environment, let environment = Schibsted.Environment(name: name) {
                let mfa = try profile.mfa.map { value in
                    guard let method = Schibsted.MFAMethod(rawValue: value) else { throw ValidationError("--mfa: unknown method '\(value)'") }
                    return method
                }
                request = try AuthorizationRequest.schibsted(
                    environment: environment, clientID: clientID, redirectURI: redirectURI, extraScopes: profile.scopes, mfa: mfa,
                    prompt: profile.prompt, loginHint: profile.loginHint
                )
            } else {
                // The login verifies an ID token, so openid is always asked for (OIDC Core §3.1.2.1).
                let scopes = profile.scopes.isEmpty ? defaultScopes : (profile.scopes.contains("openid") ? [] : ["openid"]) + profile.scopes
                request = try AuthorizationRequest(provider: provider, clientID: clientID, redirectURI: redirectURI, scopes: scopes)
                request.prompt = profile.prompt
                request.loginHint = profile.loginHint
                request.acrValues = profile.acrValues
            }
            request.maxAge = profile.maxAge
            request.uiLocales = profile.uiLocales
            request.additionalParameters += profile.parameters
            _ = try request.url()
        } catch let error as OIDCError where error.category == .configuration || error.code == .duplicateParameter {
            throw ValidationError("\(error.message)")
        }
        return request
    }

    private func openBrowser(_ url: URL) async {
        let launcher: any BrowserLauncher
        switch browser {
        case .none:
            return
        case .system(let command):
            let system = SystemBrowser(command: command)
            guard system.isAvailable else {
                Console.error("oidc: no browser to open here (no --browser, no $BROWSER, no display); open the URL above in a browser on this machine")
                return
            }
            launcher = system
        case .custom(let custom):
            launcher = custom
        }
        do { try await launcher.open(url) } catch {
            Console.error("oidc: \(error.message) Open the URL above yourself.")
        }
    }
}
