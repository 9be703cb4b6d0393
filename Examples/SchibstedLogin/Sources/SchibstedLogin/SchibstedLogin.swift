import Foundation
import OIDC

/// A Schibsted account login as an app does it: the preset's authorization URL, then every URL
/// that comes back to the app's redirect URI, until one carries the code.
public struct SchibstedLogin: Sendable {
    /// What a URL that reached the app meant.
    public enum Step: Sendable {
        /// Logged in: the ID token is verified (with the MFA in `amr`) and the login is stored.
        case loggedIn(StoredLogin)
        /// BankID returning to the app (a `bankId` path component): the login goes on in the browser.
        case keepWaiting
        /// The user cancelled on Schibsted's pages.
        case cancelled
        /// Another scheme, host or path: not this login's redirect.
        case notOurs
    }

    public var environment: Schibsted.Environment
    public var clientID: String
    /// The app's redirect URI, registered with Schibsted, such as `com.example.app:/login`.
    public var redirectURI: String
    public var extraScopes: [String]
    public var mfa: Schibsted.MFAMethod?
    /// The app at Schibsted account: `ProviderConfiguration.schibsted(environment)`, or a test's
    /// stand-in (``standIn(issuer:authorizationEndpoint:tokenEndpoint:jwksURI:)``).
    public private(set) var relyingParty: RelyingParty
    public var keychain: FileKeychain
    /// The provider the app logs in to.
    public var provider: ProviderConfiguration { relyingParty.provider }

    /// The SDK's keychain entry: service `com.schibsted.account`, account = the client id.
    public var key: TokenStoreKey { .schibsted(clientID: clientID) }

    public init(
        environment: Schibsted.Environment, clientID: String, redirectURI: String, extraScopes: [String] = [],
        mfa: Schibsted.MFAMethod? = nil, keychain: FileKeychain, transport: any HTTPTransport
    ) {
        self.environment = environment
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.extraScopes = extraScopes
        self.mfa = mfa
        self.relyingParty = RelyingParty(provider: .schibsted(environment), clientID: clientID, transport: transport)
        self.keychain = keychain
    }

    /// Sends the login to another provider that plays the environment's part (a test's stand-in):
    /// everything else about the preset stays (parameters, `X-OIDC: v1`, the issuer rule).
    public mutating func standIn(issuer: String, authorizationEndpoint: URL, tokenEndpoint: URL, jwksURI: URL) {
        var provider = relyingParty.provider
        provider.issuer = issuer
        provider.authorizationEndpoint = authorizationEndpoint
        provider.tokenEndpoint = tokenEndpoint
        provider.jwksURI = jwksURI
        relyingParty = RelyingParty(provider: provider, clientID: clientID, transport: relyingParty.transport)
    }

    /// A new login: open `request.url()` in the browser and keep `request` for ``handle(_:for:)``.
    /// No network is needed: the preset knows the environment's endpoints.
    public func start() throws(OIDCError) -> AuthorizationRequest {
        let (environment, extraScopes, mfa) = (self.environment, self.extraScopes, self.mfa)
        return try relyingParty.authorizationRequest(redirectURI: redirectURI) { request throws(OIDCError) in
            // The preset's own request (its scopes, prompt or MFA), to this provider's endpoint.
            let endpoint = request.authorizationEndpoint
            request = try .schibsted(
                environment: environment, clientID: request.clientID, redirectURI: request.redirectURI, extraScopes: extraScopes, mfa: mfa
            )
            request.authorizationEndpoint = endpoint
            request.issuer = provider.issuer
        }
    }

    /// Handles a URL that reached the app. The state is checked first (in constant time), then the
    /// issuer, then a provider error; a code is exchanged with `X-OIDC: v1` and the ID token verified,
    /// including that `amr` shows the MFA method asked for.
    public func handle(_ url: URL, for request: AuthorizationRequest) async throws -> Step {
        switch try request.handleRedirect(url) {
        case .ignored: return .keepWaiting
        case .cancelled: return .cancelled
        case .notOurs: return .notOurs
        case .authorized(let response):
            let verified = try await relyingParty.completeLogin(response, for: request)
            let login = try await relyingParty.save(verified, in: keychain, as: key, attributes: ["environment": environment.description])
            return .loggedIn(login)
        }
    }
}
