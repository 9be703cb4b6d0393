internal import Foundation

/// A completed login: tokens whose ID token passed every check of OIDC Core §3.1.3.7, with the
/// client and provider they belong to. Keep it with ``RelyingParty/save(_:in:as:attributes:)``
/// or ``StoredLogin/init(_:attributes:)``.
public struct VerifiedLogin: Sendable {
    /// The tokens of the code exchange; their ID token is the one verified.
    public let tokens: TokenSet
    /// The verified ID token and its claims.
    public let idToken: IDToken
    /// The client the tokens were issued to.
    public let clientID: String
    /// The issuer the ID token was checked against, as configured (it may differ from the token's
    /// `iss` by what the provider's ``ProviderConfiguration/issuerMatching`` allows).
    public let issuer: String
    /// The provider the tokens came from, as configured.
    public let provider: ProviderConfiguration
    /// The DPoP key the tokens are bound to, when the login asked for DPoP (``RelyingParty/Configuration/dpop``);
    /// ``StoredLogin/init(_:attributes:)`` keeps it with them.
    public var dpopKey: DPoPKey?

    /// A verified login from its parts (for code that verifies tokens itself, and for tests).
    package init(tokens: TokenSet, idToken: IDToken, clientID: String, issuer: String, provider: ProviderConfiguration) {
        self.tokens = tokens
        self.idToken = idToken
        self.clientID = clientID
        self.issuer = issuer
        self.provider = provider
    }
}
