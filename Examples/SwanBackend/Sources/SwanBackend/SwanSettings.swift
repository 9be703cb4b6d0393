import Foundation
import OIDC

/// What the backend needs to know about itself and about Swan.
public struct SwanSettings: Sendable {
    /// The Swan OAuth client id (`SANDBOX_…` or `LIVE_…`).
    public var clientID: String
    /// The client secret; it never leaves the server (`client_secret_post` at the token endpoint).
    public var clientSecret: Secret
    /// Where browsers reach this server, such as `https://backend.example.com`. Cookies get
    /// `Secure` when it is https.
    public var publicBaseURL: URL
    /// The app's deep link that receives the session id after a login, such as
    /// `com.example.app://swan/logged-in`.
    public var appLoginLink: String
    /// The app's deep link that receives a confirmed consent.
    public var appConsentLink: String
    /// Swan's issuer; discovery there gives the endpoints and the JWKS. A test points it elsewhere.
    public var issuer: String
    /// Swan's partner GraphQL API, where consents are read: the sandbox or the live one, as the
    /// client id's `SANDBOX_`/`LIVE_` prefix says, unless given.
    public var apiURL: URL
    public var scopes: [String]

    public init(
        clientID: String, clientSecret: Secret, publicBaseURL: URL,
        appLoginLink: String = "com.example.app://swan/logged-in", appConsentLink: String = "com.example.app://swan/consent",
        issuer: String = ProviderConfiguration.swan.issuer,
        apiURL: URL? = nil,
        scopes: [String] = ProviderConfiguration.swan.defaultScopes
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.publicBaseURL = publicBaseURL
        self.appLoginLink = appLoginLink
        self.appConsentLink = appConsentLink
        self.issuer = issuer
        self.apiURL = apiURL ?? Self.partnerAPI(for: clientID)
        self.scopes = scopes
    }

    /// Swan's environment for this client: `Live` for a `LIVE_…` client id, else `Sandbox`.
    public var environment: SwanConsentCallback.Environment {
        clientID.hasPrefix("LIVE_") ? .live : .sandbox
    }

    static func partnerAPI(for clientID: String) -> URL {
        URL(string: clientID.hasPrefix("LIVE_") ? "https://api.swan.io/live-partner/graphql" : "https://api.swan.io/sandbox-partner/graphql")!
    }

    /// The redirect URI registered with Swan: `{publicBaseURL}/auth/callback`.
    public var redirectURI: String { publicBaseURL.appendingPathComponent("auth/callback").absoluteString }

    var usesHTTPS: Bool { publicBaseURL.scheme?.lowercased() == "https" }
}
