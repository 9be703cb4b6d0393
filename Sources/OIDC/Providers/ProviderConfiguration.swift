public import Foundation

/// How the client authenticates at the provider's endpoints (RFC 6749 §2.3, RFC 7523, OIDC Core
/// §9), by RFC 8414's names; ``ClientAuthentication`` carries the method with its secret or key.
public enum ClientAuthenticationMethod: String, Sendable, Hashable, CaseIterable {
    /// A public client: only `client_id` in the body (native apps, CLIs; PKCE protects the code).
    case none
    /// HTTP Basic with the form-encoded client id and secret (RFC 6749 §2.3.1).
    case clientSecretBasic = "client_secret_basic"
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
    /// A JWT assertion signed with HMAC keyed by the client secret (RFC 7523, OIDC Core §9).
    case clientSecretJWT = "client_secret_jwt"
    /// A JWT assertion signed with the client's private key (RFC 7523, OIDC Core §9).
    case privateKeyJWT = "private_key_jwt"
    /// Mutual TLS with a certificate from a certificate authority the provider trusts, matched to the
    /// client by a registered subject name (RFC 8705 §2.1); only `client_id` in the body.
    case tlsClientAuth = "tls_client_auth"
    /// Mutual TLS with a self-signed certificate the provider has registered for the client (its
    /// JWKS or the certificate itself, RFC 8705 §2.2); only `client_id` in the body.
    case selfSignedTLSClientAuth = "self_signed_tls_client_auth"

    /// Whether the client proves itself with its TLS client certificate (RFC 8705 §2): the
    /// transport must present one.
    public var isMutualTLS: Bool { self == .tlsClientAuth || self == .selfSignedTLSClientAuth }
}

/// How an issuer found in a response or token is compared with the expected one.
public enum IssuerMatching: String, Sendable, Hashable, CaseIterable {
    /// Exact string comparison, as OIDC Core §3.1.3.7 and RFC 9207 require.
    case exact
    /// Ignores one trailing slash on either side (the Schibsted SDK's rule).
    case ignoringTrailingSlash = "ignore-trailing-slash"

    /// Whether `found` is acceptable for `expected`.
    package func matches(_ found: String, expected: String) -> Bool {
        switch self {
        case .exact:
            return ConstantTime.equals(found, expected)
        case .ignoringTrailingSlash:
            func trimmed(_ s: String) -> String { s.hasSuffix("/") ? String(s.dropLast()) : s }
            return ConstantTime.equals(trimmed(found), trimmed(expected))
        }
    }
}

/// What the library knows about a provider: its issuer, endpoints and quirks.
///
/// Build one from explicit endpoints, from a preset (``schibsted(_:)``, ``swan``), or, once
/// discovery is used, from the provider's metadata.
public struct ProviderConfiguration: Sendable, Equatable {
    /// The issuer identifier (`iss`) of the provider.
    public var issuer: String
    /// Where the user's browser is sent to log in; `nil` for a provider that runs no browser
    /// login for this client (client credentials only, or a login kept without it).
    public var authorizationEndpoint: URL?
    /// The token endpoint, for code exchange and refresh; ``TokenClient`` needs it.
    public var tokenEndpoint: URL?
    /// The provider's key set, for ID-token verification
    /// (``JWKSCache/init(transport:jwksURI:maximumAge:unknownKeyCooldown:logger:)``).
    public var jwksURI: URL?
    /// The userinfo endpoint, for ``TokenClient/userinfo(accessToken:expectedSubject:)``.
    public var userinfoEndpoint: URL?
    /// The revocation endpoint (RFC 7009), for ``TokenClient/revoke(_:hint:)``.
    public var revocationEndpoint: URL?
    /// The end-session endpoint, for ``TokenClient/endSessionURL(idTokenHint:postLogoutRedirectURI:state:)``.
    public var endSessionEndpoint: URL?
    /// The device authorization endpoint (RFC 8628 §3.1), for logins on devices without a browser.
    public var deviceAuthorizationEndpoint: URL?
    /// The token introspection endpoint (RFC 7662).
    public var introspectionEndpoint: URL?
    /// The pushed authorization request endpoint (RFC 9126), where
    /// ``RelyingParty/authorizationURL(for:)`` sends a login's parameters when the provider requires
    /// it or the relying party asks for it.
    public var pushedAuthorizationRequestEndpoint: URL?
    /// The backchannel authentication endpoint (OpenID CIBA Core 1.0 §4,
    /// `backchannel_authentication_endpoint`), for ``RelyingParty/backchannelLogin(_:)``.
    public var backchannelAuthenticationEndpoint: URL?
    /// Whether the provider takes authorization requests only when pushed (RFC 9126 §5,
    /// `require_pushed_authorization_requests`): ``RelyingParty/authorizationURL(for:)`` then pushes
    /// every request, whatever the relying party's setting.
    public var requiresPushedAuthorizationRequests: Bool
    /// Whether the provider takes authorization requests only as signed request objects (RFC 9101
    /// §10.5, `require_signed_request_object`): ``RelyingParty/authorizationURL(for:)`` then
    /// refuses to send one without ``FrontChannel/requestObjectKey``.
    public var requiresSignedRequestObjects: Bool
    /// The algorithms the provider takes for request objects (`request_object_signing_alg_values_supported`);
    /// empty when it does not say. ``RelyingParty/authorizationURL(for:)`` refuses a
    /// ``FrontChannel/requestObjectKey`` of another algorithm before anything is sent.
    public var requestObjectSigningAlgorithms: [String]
    /// The algorithms the provider takes for DPoP proofs (`dpop_signing_alg_values_supported`,
    /// RFC 9449 §5.1); empty when it does not say. A ``RelyingParty/Configuration/dpop`` key of another
    /// algorithm is refused before anything is sent.
    public var dpopSigningAlgorithms: [String]
    /// The response modes the provider names (`response_modes_supported`); `nil` when it does not
    /// say. ``RelyingParty/authorizationURL(for:)`` refuses a request whose
    /// ``AuthorizationRequest/responseMode`` is not among them before anything is sent.
    public var responseModesSupported: [String]?
    /// The algorithms the provider signs JARM responses with
    /// (`authorization_signing_alg_values_supported`, JARM §3); empty when it does not say, and then
    /// only RS256 is accepted (``JARMVerifier/init(provider:clientID:)``).
    public var authorizationSigningAlgorithms: [String]
    /// The algorithms the provider signs ID tokens with (`id_token_signing_alg_values_supported`,
    /// OIDC Discovery §3); empty when it does not say. Under FAPI 2.0, a provider that names none of
    /// PS256, ES256 and EdDSA is refused before anything is sent (`SecurityProfile.validate(_:)`).
    public var idTokenSigningAlgorithms: [String] = []
    /// The PKCE methods the provider names (`code_challenge_methods_supported`): a device login
    /// sends PKCE S256 when `S256` is among them.
    public var codeChallengeMethodsSupported: [String]
    /// The scopes a request gets when the caller names none.
    public var defaultScopes: [String]
    /// How the client authenticates at the token endpoint.
    public var clientAuthentication: ClientAuthenticationMethod
    /// Extra headers for every token-endpoint request (Schibsted: `X-OIDC: v1`).
    public var tokenRequestHeaders: [OAuthParameter]
    /// How issuers are compared.
    public var issuerMatching: IssuerMatching
    /// Whether the provider promises `iss` in authorization responses (RFC 9207); when `true`, a
    /// callback without `iss` is rejected.
    public var authorizationResponseIssParameterSupported: Bool
    /// The endpoints a client that uses mutual TLS calls instead of the ordinary ones (RFC 8705 §5,
    /// `mtls_endpoint_aliases`); none unless discovery or the caller names them.
    public var mutualTLSEndpointAliases: MutualTLSEndpointAliases = MutualTLSEndpointAliases()
    /// Whether the provider binds the access tokens it issues over mutual TLS to the client's
    /// certificate (RFC 8705 §3.3, `tls_client_certificate_bound_access_tokens`): such a token is
    /// accepted only over a connection that presents the same certificate.
    public var tlsClientCertificateBoundAccessTokens: Bool = false

    /// A provider from explicit endpoints.
    ///
    /// The userinfo, revocation, end-session, device authorization, introspection and pushed
    /// authorization request endpoints start as `nil`, with no extra token-request headers, exact issuer matching and no RFC 9207 promise: set those members afterwards when the
    /// provider needs them.
    public init(
        issuer: String,
        authorizationEndpoint: URL?,
        tokenEndpoint: URL? = nil,
        jwksURI: URL? = nil,
        defaultScopes: [String] = ["openid"],
        clientAuthentication: ClientAuthenticationMethod = .none
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.userinfoEndpoint = nil
        self.revocationEndpoint = nil
        self.endSessionEndpoint = nil
        self.deviceAuthorizationEndpoint = nil
        self.introspectionEndpoint = nil
        self.pushedAuthorizationRequestEndpoint = nil
        self.backchannelAuthenticationEndpoint = nil
        self.requiresPushedAuthorizationRequests = false
        self.requiresSignedRequestObjects = false
        self.requestObjectSigningAlgorithms = []
        self.dpopSigningAlgorithms = []
        self.responseModesSupported = nil
        self.authorizationSigningAlgorithms = []
        self.codeChallengeMethodsSupported = []
        self.defaultScopes = defaultScopes
        self.clientAuthentication = clientAuthentication
        self.tokenRequestHeaders = []
        self.issuerMatching = .exact
        self.authorizationResponseIssParameterSupported = false
    }
}
