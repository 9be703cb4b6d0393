import ArgumentParser
import Foundation
import Logging
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A profile's stored login and what it takes to keep it fresh: the commands that use a login
/// (`token`, `refresh`, `request`, `logout`, `status`) start here.
struct ProfileLogin {
    let options: StoreSelection
    let profile: Profile?
    let keychain: FileKeychain
    let login: StoredLogin

    /// Reads the profile's settings and its login.
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` (exit 4) naming the profile and what to do when no
    ///   login is stored; the store's errors (exit 7) for an unreadable or corrupt one.
    static func load(_ options: StoreOptions) throws -> ProfileLogin { try load(options.selection, logger: CLILog.logger(.store)) }

    /// - Parameter logger: the store's; `nil` on the fast path, which runs before logging is set up.
    static func load(_ options: StoreSelection, logger: Logger? = nil) throws -> ProfileLogin {
        let profile = try options.savedProfile()
        let keychain = try options.keychain(profile: profile, logger: logger)
        guard let login = try keychain.load(options.key) else { throw notLoggedIn(options, profile: profile) }
        let loaded = ProfileLogin(options: options, profile: profile, keychain: keychain, login: login)
        LoginAgain.using(profile: options.profileName, command: loaded.loginAgain)
        return loaded
    }

    static func notLoggedIn(_ options: StoreSelection, profile: Profile?) -> OIDCError {
        let name = options.profileName
        let command = LoginAgain.command(profile: name, saved: profile, login: nil, store: options.store)
        if profile != nil {
            return OIDCError(.notLoggedIn, "Profile '\(name)' is logged out; log in again with: \(command)", context: ["profile": name])
        }
        return OIDCError(
            .notLoggedIn, "There is no login for profile '\(name)'; log in first: \(command) (or oidc inject in tests).",
            context: ["profile": name]
        )
    }

    /// The command that logs this profile in again, with the flags its settings lack.
    var loginAgain: String { LoginAgain.command(profile: options.profileName, saved: profile, login: login, store: options.store) }

    /// The client secret for refreshes and revocation: `--client-secret-file` of this command, else
    /// the profile's when the profile was configured for this login's issuer and client
    /// (``profileSecretFile``).
    func clientSecret(file override: String?) throws -> Secret? {
        guard let path = override ?? profileSecretFile else { return nil }
        return try ClientSecretFile.read(path)
    }

    /// The profile's client secret file, when the profile names this login's issuer and client id;
    /// `nil` otherwise, so that one provider's secret never goes to another (review 3, M3).
    var profileSecretFile: String? {
        guard let profile, profile.configures(login) else { return nil }
        return profile.clientSecretFile
    }

    /// Why the profile's client secret file is not used for this login, when it has one that is
    /// for another issuer or client; `nil` otherwise.
    var withheldSecretReason: String? {
        guard let profile, profile.clientSecretFile != nil || profile.privateKeyFile != nil, !profile.configures(login) else { return nil }
        return "the login of profile '\(options.profileName)' in \(keychain.directory.path) is of \(login.clientDescription), "
            + "and the profile's client secret file is for \(profile.configuredClient): a client secret goes only to the provider and client it was configured for"
    }

    /// The profile, when it was configured for this login's issuer and client: only then do its
    /// credentials (a secret file, a private key) and their settings apply.
    var boundProfile: Profile? { profile.flatMap { $0.configures(login) ? $0 : nil } }

    /// The token client of this login, rebuilt without the network; `nil` when the login names no
    /// token endpoint. Without its secret or key, a confidential client refuses to send anything.
    func tokenClient(transport: any HTTPTransport, clientSecretFile: String?) throws -> TokenClient? {
        guard let provider = StoredProvider.configuration(of: login) else { return nil }
        let method = provider.clientAuthentication
        let secret = method == .none || method == .privateKeyJWT || method.isMutualTLS ? nil : try clientSecret(file: clientSecretFile)
        let authentication = try (boundProfile ?? Profile()).clientAuthentication(method: method, secret: secret)
        var client = TokenClient(
            provider: provider, clientID: login.clientID, authentication: authentication, transport: transport, now: CLIClock.now,
            logger: CLILog.logger(.token)
        )
        // A resource's login asks for every token with its resource (RFC 8707): refreshes, and a
        // client's own tokens asked for anew.
        client.resource = login.resource
        return client
    }

    /// Whether the client authenticates with a secret or a private key and none is at hand (a
    /// profile's credentials for another issuer or client are not at hand).
    func lacksSecret(file override: String?) -> Bool {
        switch StoredProvider.authenticationMethod(of: login) {
        case .none: false
        case .privateKeyJWT: boundProfile?.privateKeyFile == nil
        case .tlsClientAuth, .selfSignedTLSClientAuth: false
        default: override == nil && profileSecretFile == nil
        }
    }

    /// The login's provider as a relying party, each part logging under its own label: its token
    /// endpoint refreshes, its keys verify refreshed ID tokens (under FAPI 2.0's algorithms when the
    /// profile that configured the login says `--fapi2`). A login that names no token endpoint
    /// gets one that cannot refresh (``requireRefreshable(clientSecretFile:)`` says so first).
    func relyingParty(transport: any HTTPTransport, clientSecretFile: String?) throws -> RelyingParty {
        let client = try tokenClient(transport: transport, clientSecretFile: clientSecretFile)
            ?? TokenClient(
                provider: ProviderConfiguration(issuer: login.issuer, authorizationEndpoint: nil), clientID: login.clientID, transport: transport,
                now: CLIClock.now, logger: CLILog.logger(.token)
            )
        let keys = client.provider.jwksURI.map { JWKSCache(transport: transport, jwksURI: $0, logger: CLILog.logger(.jwks)) }
        // The profile that configured this login configures its relying party: a --fapi2 profile
        // holds refreshed ID tokens to FAPI 2.0's algorithms, as its login was.
        var configuration = RelyingParty.Configuration()
        try (boundProfile ?? Profile()).configure(&configuration, provider: client.provider)
        // The login, not the profile, says whether tokens are bound: a DPoP-bound client-credentials
        // login asks for its next tokens bound to a new key too; a bearer login stays one.
        configuration.dpop = login.isDPoPBound ? .newKeyPerLogin(login.dpopKey?.algorithm ?? .es256) : .off
        return RelyingParty(tokenClient: client, keys: keys, logger: CLILog.logger(.session), configuration: configuration)
    }

    /// A session over this login that refreshes through the provider's token endpoint and keeps
    /// refreshed ID tokens only when they verify against the provider's keys.
    func session(
        transport: any HTTPTransport, clientSecretFile: String?, allowlist: HostAllowlist,
        options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) throws -> AuthenticatedSession {
        // A refresh must not be cut short between the provider's answer and the save.
        SignalShield.install()
        let rp = try relyingParty(transport: transport, clientSecretFile: clientSecretFile)
        if let request = JWTBearerRequest(of: login) {
            // A workload's tokens: the assertion file's current content presented anew, under the
            // store's lock, when they expire.
            let path = boundProfile?.assertionFile
            let name = self.options.profileName
            return rp.jwtBearerSession(
                scopes: request.scopes, parameters: request.parameters, allowlist: allowlist, store: keychain, key: self.options.key, options: options
            ) { () throws(OIDCError) -> Secret in
                guard let path else {
                    throw OIDCError(
                        .notLoggedIn, "The login of profile '\(name)' came from the JWT bearer grant and the profile names no assertion file; log in again with --profile \(name) --flow jwt-bearer --assertion-file FILE.",
                        context: ["profile": name])
                }
                return try AssertionFile.read(path)
            }
        }
        if let request = ClientCredentialsRequest(of: login) {
            // The client's own tokens: asked for anew, under the store's lock, when they expire.
            return rp.serviceSession(
                scopes: request.scopes, parameters: request.parameters, allowlist: allowlist, store: keychain, key: self.options.key, options: options
            )
        }
        return rp.session(store: keychain, key: self.options.key, allowlist: allowlist, options: options)
    }

    /// Refreshing needs a token endpoint (a login injected without one can only be replaced) and,
    /// for a confidential client, its secret: checked before anything is sent, the login is kept.
    func requireRefreshable(clientSecretFile: String?) throws {
        if lacksSecret(file: clientSecretFile) {
            let name = options.profileName
            let method = StoredProvider.authenticationMethod(of: login).rawValue
            if method == ClientAuthenticationMethod.privateKeyJWT.rawValue, withheldSecretReason == nil {
                throw OIDCError(
                    .invalidArgument,
                    "The client of profile '\(name)' authenticates with private_key_jwt and the profile names no private key: log in again with --profile \(name) --private-key-file FILE.",
                    context: ["profile": name]
                )
            }
            if let reason = withheldSecretReason {
                throw OIDCError(
                    .invalidArgument,
                    "Nothing was sent: \(reason). Give --client-secret-file FILE of client \(UntrustedText.sanitized(login.clientID)), or remove this login with: oidc logout --profile \(name) --store \(keychain.directory.path)",
                    context: ["profile": name, "path": keychain.directory.path]
                )
            }
            throw OIDCError(
                .invalidArgument,
                "The client of profile '\(name)' authenticates with \(method) and no client secret is at hand (one given with --client-secret is never stored): give --client-secret-file FILE, or log in again with --profile \(name) --client-secret-file FILE.",
                context: ["profile": name]
            )
        }
        guard StoredProvider.configuration(of: login) != nil else {
            throw OIDCError(
                .notLoggedIn,
                "The token of profile '\(options.profileName)' needs a refresh and its login names no token endpoint to refresh it; log in again with: \(loginAgain)",
                context: ["profile": options.profileName]
            )
        }
    }
}
