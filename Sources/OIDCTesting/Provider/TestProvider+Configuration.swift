public import Foundation
public import OIDC

extension TestProvider {
    /// How a ``TestProvider`` behaves. Every member has a default; change what a test needs.
    public struct Configuration: Sendable {
        /// The loopback address to bind: `127.0.0.1` (default) or `::1`. Anything else is refused.
        public var host: String
        /// The port to bind; `0` (default) picks an ephemeral one.
        public var port: Int
        /// A path after `http://127.0.0.1:PORT` in the issuer, such as `/realms/test`; `""` by default.
        public var issuerPath: String
        /// The registered clients; by default the public client ``Client/default``.
        public var clients: [Client]
        /// The user every sign-in produces.
        public var user: TestUser
        /// How ID tokens are signed.
        public var idTokenAlgorithm: IDTokenAlgorithm
        /// `expires_in` of access tokens, in seconds.
        public var accessTokenLifetime: Int
        /// Lifetime of ID tokens (`exp - iat`), in seconds.
        public var idTokenLifetime: Int
        /// How long an authorization code can be redeemed, in seconds (60 by default).
        public var authorizationCodeLifetime: Int
        /// Whether a refresh issues a new refresh token and spends the old one (default). Without
        /// rotation the refresh token stays valid and refresh responses omit `refresh_token`.
        public var refreshTokenRotation: Bool
        /// Whether token responses carry a refresh token. Always (default), whatever the scope: real
        /// providers differ (`offline_access`, `offline`), tests rarely care.
        public var issuesRefreshTokens: Bool
        /// What `/authorize` does with a valid request.
        public var authorizeBehaviour: AuthorizeBehaviour
        /// Whether the discovery document advertises `authorization_response_iss_parameter_supported`
        /// and redirects carry `iss` (RFC 9207); on by default.
        public var issuerParameterSupported: Bool
        /// How many earlier key generations stay in the JWKS after ``TestProvider/rotateKeys()``
        /// (1 by default: the previous keys stay published until the next rotation).
        public var retainedKeyGenerations: Int
        /// Added to the real time for everything the provider dates (`iat`, `exp`, code expiry,
        /// the `Date` header), in seconds: a provider whose clock runs ahead or behind.
        public var clockOffset: TimeInterval
        /// Largest request body accepted; larger ones get `413`. 64 KiB by default.
        public var maximumRequestBodySize: Int
        /// Connections open at once, and how long one may wait for a whole request (idle and
        /// request-head timeouts); see ``HTTPConnectionLimits`` for the defaults.
        public var connectionLimits = HTTPConnectionLimits()
        /// Serve https with this certificate and key; `nil` (default) serves plain http.
        public var tls: TLS?
        /// Which `aud` a client assertion may carry: the issuer or the endpoint by default.
        public var assertionAudience: AssertionAudience = .issuerOrEndpoint
        /// Whether a client assertion (`private_key_jwt`) or a request object must name its key
        /// with a `kid`, as glewlwyd does (it looks the client's keys up by `kid`): one without is
        /// refused (`invalid_client`, `invalid_request_object`). Off by default: a client with one
        /// key needs no `kid`.
        public var requiresKeyID = false
        /// How the device authorization grant behaves (RFC 8628).
        public var deviceFlow = DeviceFlow()
        /// Whether `/par` takes pushed authorization requests (RFC 9126), and whether `/authorize`
        /// takes nothing else: offered by default.
        public var pushedAuthorizationRequests: PushedAuthorizationRequests = .offered
        /// How many seconds a pushed request's `request_uri` can be used, once (60 by default).
        public var pushedRequestLifetime = 60
        /// Whether authorization requests must come as signed request objects (RFC 9101); they are
        /// accepted by default, from clients with a registered JWKS.
        public var signedRequestObjects: SignedRequestObjects = .accepted
        /// DPoP (RFC 9449): accepted without nonces by default (see ``DPoP``).
        public var dpop = DPoP()
        /// Whether `/authorize` answers `response_mode=jwt` and `query.jwt` with a signed response
        /// (JARM), and advertises them: offered by default.
        public var signedResponses: SignedResponses = .offered
        /// A broken signed response (JARM) `/authorize` sends instead of a correct one, for tests of
        /// a client's refusals; `nil` (the default) sends correct ones.
        public var signedResponseFault: SignedResponseFault?
        /// Mutual TLS (RFC 8705), with ``tls``: client certificates asked for, `tls_client_auth` and
        /// `self_signed_tls_client_auth`, certificate-bound access tokens, endpoint aliases. `nil`
        /// (the default) asks for no client certificate.
        public var mutualTLS: MutualTLS?
        /// The protected resource at `/resource`, its RFC 9728 metadata and step-up route (``ProtectedResource``).
        public var protectedResource = ProtectedResource()
        /// Dynamic client registration (RFC 7591) at `/register`; `nil` (the default) offers none.
        public var registration: Registration?
        /// Which metadata documents are served: OpenID discovery and RFC 8414 by default.
        public var metadataDocuments: MetadataDocuments = .openIDAndOAuth
        /// The issuers whose JWTs the token endpoint takes in the JWT bearer grant (RFC 7523 §2.1):
        /// none by default, so the grant is refused `invalid_grant` (``TrustedAssertionIssuer``).
        public var trustedAssertionIssuers: [TrustedAssertionIssuer] = []
        /// The `authorization_details` types (RFC 9396) the provider takes, published as
        /// `authorization_details_types_supported`; `nil` (the default) takes any type. Details of
        /// another type, or malformed ones, are refused `invalid_authorization_details`.
        public var authorizationDetailsTypes: Set<String>?
        /// Backchannel logins (OpenID CIBA Core 1.0, poll and ping): their lifetime and interval.
        public var ciba = CIBA()

        /// A configuration; each parameter's default is the one its property names.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            issuerPath: String = "",
            clients: [Client] = [.default],
            user: TestUser = .default,
            idTokenAlgorithm: IDTokenAlgorithm = .rs256,
            accessTokenLifetime: Int = 3600,
            idTokenLifetime: Int = 3600,
            authorizationCodeLifetime: Int = 60,
            refreshTokenRotation: Bool = true,
            issuesRefreshTokens: Bool = true,
            authorizeBehaviour: AuthorizeBehaviour = .signIn,
            issuerParameterSupported: Bool = true,
            retainedKeyGenerations: Int = 1,
            clockOffset: TimeInterval = 0,
            maximumRequestBodySize: Int = 64 * 1024,
            tls: TLS? = nil
        ) {
            self.host = host
            self.port = port
            self.issuerPath = issuerPath
            self.clients = clients
            self.user = user
            self.idTokenAlgorithm = idTokenAlgorithm
            self.accessTokenLifetime = accessTokenLifetime
            self.idTokenLifetime = idTokenLifetime
            self.authorizationCodeLifetime = authorizationCodeLifetime
            self.refreshTokenRotation = refreshTokenRotation
            self.issuesRefreshTokens = issuesRefreshTokens
            self.authorizeBehaviour = authorizeBehaviour
            self.issuerParameterSupported = issuerParameterSupported
            self.retainedKeyGenerations = retainedKeyGenerations
            self.clockOffset = clockOffset
            self.maximumRequestBodySize = maximumRequestBodySize
            self.tls = tls
        }

        /// Refuses what the provider cannot honour safely.
        ///
        /// - Throws: ``OIDCError/Code/invalidArgument`` for a non-loopback host, a port outside
        ///   0...65535, an issuer path that is not `""` or `/segment…` without a trailing slash, query
        ///   or fragment, duplicate client ids, a confidential client without a secret, a
        ///   non-positive lifetime or size, or a DPoP policy ``DPoP`` refuses.
        func validate() throws(OIDCError) {
            try dpop.validate()
            guard Self.loopbackHosts.contains(host) else {
                throw OIDCError(
                    .invalidArgument,
                    "The test provider binds only a loopback IP address (127.0.0.1 or ::1), not '\(host)'.",
                    context: ["host": host]
                )
            }
            guard (0...65535).contains(port) else {
                throw OIDCError(.invalidArgument, "The port must be in 0...65535.", context: ["port": String(port)])
            }
            if !issuerPath.isEmpty {
                guard issuerPath.hasPrefix("/"), !issuerPath.hasSuffix("/"),
                    !issuerPath.contains(where: { "?#% ".contains($0) })
                else {
                    throw OIDCError(
                        .invalidArgument,
                        "The issuer path must be empty or start with '/' and have no trailing '/', query, fragment, space or escape.",
                        context: ["issuerPath": issuerPath]
                    )
                }
            }
            if mutualTLS != nil, tls == nil {
                throw OIDCError(.invalidArgument, "Mutual TLS needs TLS: set the configuration's tls (a server certificate and key) too.")
            }
            var ids = Set<String>()
            for client in clients {
                guard !client.id.isEmpty, ids.insert(client.id).inserted else {
                    throw OIDCError(.invalidArgument, "Client ids must be non-empty and unique.", context: ["clientID": client.id])
                }
                switch client.authentication {
                case .none:
                    break
                case .tlsClientAuth, .selfSignedTLSClientAuth:
                    try client.validateMutualTLS(mutualTLS)
                case .privateKeyJWT:
                    guard let jwks = client.jwks, (try? JWKSet(json: Array(jwks.utf8), allowsSymmetricKeys: false))?.keys.isEmpty == false else {
                        throw OIDCError(
                            .invalidArgument, "A private_key_jwt client needs its public keys: a JWKS document with at least one key.",
                            context: ["clientID": client.id]
                        )
                    }
                default:
                    guard client.secret != nil else {
                        throw OIDCError(
                            .invalidArgument, "A client that authenticates with a secret needs one.", context: ["clientID": client.id]
                        )
                    }
                }
            }
            guard accessTokenLifetime > 0, idTokenLifetime > 0, authorizationCodeLifetime > 0, maximumRequestBodySize > 0,
                retainedKeyGenerations >= 0, pushedRequestLifetime > 0
            else {
                throw OIDCError(.invalidArgument, "Lifetimes and sizes must be positive, retained key generations not negative.")
            }
        }

        static let loopbackHosts: Set<String> = ["127.0.0.1", "::1"]
    }

    /// The certificate and key of a provider that serves https (the issuer is then
    /// `https://127.0.0.1:PORT`). Clients must trust the chain's CA, for instance through
    /// `NIOHTTPTransport.Configuration.additionalTrustRootsPEM`.
    public struct TLS: Sendable, Equatable {
        /// The server certificate first, then any intermediates, PEM.
        public var certificateChainPEM: String
        /// The server certificate's private key, PEM.
        public var privateKeyPEM: String

        /// A certificate chain (server certificate first) and its private key, both PEM.
        public init(certificateChainPEM: String, privateKeyPEM: String) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
        }
    }

    /// A registered client.
    public struct Client: Sendable, Equatable {
        /// The `client_id`.
        public var id: String
        /// The client secret; `nil` for public clients and `private_key_jwt` ones.
        public var secret: Secret?
        /// How the client authenticates at the token and revocation endpoints.
        public var authentication: ClientAuthentication
        /// The client's public keys (a JWKS document), for ``ClientAuthentication/privateKeyJWT``.
        public var jwks: String?
        /// Registered redirect URIs, compared exactly, except that a loopback IP literal
        /// (`http://127.0.0.1/…`, `http://[::1]/…`) matches any port (RFC 8252 §7.3). `localhost`
        /// gets no such rule.
        public var redirectURIs: [String]
        /// Registered `post_logout_redirect_uri` values, matched like redirect URIs.
        public var postLogoutRedirectURIs: [String]
        /// Scope values the client may request; `nil` allows any.
        public var allowedScopes: Set<String>?
        /// The subject its certificate must have, for ``ClientAuthentication/tlsClientAuth`` (RFC
        /// 8705 §2.1.2, `tls_client_auth_subject_dn`), as RFC 4514 text: `CN=client,O=Example`.
        public var tlsClientAuthSubjectDN: String?
        /// Its registered self-signed certificates (PEM), for
        /// ``ClientAuthentication/selfSignedTLSClientAuth``; the `x5c` certificates of ``jwks`` count too.
        public var tlsClientCertificatesPEM: [String] = []
        /// Whether its loopback redirect URIs match only with their port (a dynamically registered
        /// client at a provider with ``Registration/exactLoopbackPort``).
        var matchesLoopbackPortExactly = false
        /// The grant types a dynamically registered client named (RFC 7591 `grant_types`); it may
        /// use no other (`unauthorized_client`). `nil` (a configured client): any.
        var registeredGrantTypes: Set<String>?

        /// A client; a public one (no secret, ``ClientAuthentication/none``) unless told otherwise.
        public init(
            id: String,
            secret: String? = nil,
            authentication: ClientAuthentication = .none,
            redirectURIs: [String],
            postLogoutRedirectURIs: [String] = [],
            allowedScopes: Set<String>? = nil,
            jwks: String? = nil
        ) {
            self.id = id
            self.secret = secret.map(Secret.init)
            self.authentication = authentication
            self.jwks = jwks
            self.redirectURIs = redirectURIs
            self.postLogoutRedirectURIs = postLogoutRedirectURIs
            self.allowedScopes = allowedScopes
        }

        /// The public client `test-client` (no secret, PKCE required), redirect URI
        /// `http://127.0.0.1/callback` on any port, post-logout redirect `http://127.0.0.1/logged-out`.
        public static let `default` = Client(
            id: "test-client",
            redirectURIs: ["http://127.0.0.1/callback"],
            postLogoutRedirectURIs: ["http://127.0.0.1/logged-out"]
        )

        /// A confidential client with a secret, `client_secret_basic` unless told otherwise.
        public static func confidential(
            id: String,
            secret: String,
            authentication: ClientAuthentication = .clientSecretBasic,
            redirectURIs: [String] = ["http://127.0.0.1/callback"]
        ) -> Client {
            Client(id: id, secret: secret, authentication: authentication, redirectURIs: redirectURIs)
        }

        /// A client that authenticates with `private_key_jwt`: assertions signed with a private key
        /// whose public half is in `jwks` (a JWKS document, such as ``TestSigningKey/jwksJSON``).
        public static func privateKeyJWT(id: String, jwks: String, redirectURIs: [String] = ["http://127.0.0.1/callback"]) -> Client {
            Client(id: id, authentication: .privateKeyJWT, redirectURIs: redirectURIs, jwks: jwks)
        }

        /// A `private_key_jwt` client whose registered JWKS holds the public halves of `keys`.
        public static func privateKeyJWT(id: String, keys: [JWSSigningKey], redirectURIs: [String] = ["http://127.0.0.1/callback"]) -> Client {
            privateKeyJWT(id: id, jwks: JWSSigningKey.publicJWKSet(keys), redirectURIs: redirectURIs)
        }

        var isPublic: Bool { authentication == .none }
    }

    /// Client authentication at the token endpoint (RFC 6749 §2.3.1, OIDC Core §9).
    public enum ClientAuthentication: String, Sendable, Equatable, CaseIterable {
        /// A public client: `client_id` in the body, no secret; PKCE is required.
        case none
        /// `Authorization: Basic base64(urlencode(id):urlencode(secret))`.
        case clientSecretBasic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form body.
        case clientSecretPost = "client_secret_post"
        /// A client assertion (RFC 7523) signed with HMAC keyed by the secret.
        case clientSecretJWT = "client_secret_jwt"
        /// A client assertion (RFC 7523) signed with a private key of the client's registered JWKS.
        case privateKeyJWT = "private_key_jwt"
        /// A TLS client certificate issued by one of ``MutualTLS/clientCertificateAuthoritiesPEM``
        /// with the registered ``Client/tlsClientAuthSubjectDN`` (RFC 8705 §2.1).
        case tlsClientAuth = "tls_client_auth"
        /// A TLS client certificate equal to one the client registered (RFC 8705 §2.2).
        case selfSignedTLSClientAuth = "self_signed_tls_client_auth"
    }

    /// Which `aud` a client assertion may carry (RFC 7523 §3 item 3).
    public enum AssertionAudience: Sendable, Equatable {
        /// The issuer identifier or the URL of the endpoint it is sent to, as RFC 7523 asks a server
        /// to accept. The default.
        case issuerOrEndpoint
        /// The issuer identifier only, as FAPI 2.0 requires.
        case issuer
        /// The endpoint's URL only, as some servers want (OIDC Core §9's older advice).
        case endpoint
    }

    /// How ID tokens are signed.
    public enum IDTokenAlgorithm: String, Sendable, Equatable, CaseIterable {
        /// RS256, with the provider's RSA key (2048 bits); the default.
        case rs256 = "RS256"
        /// ES256, with the provider's P-256 key.
        case es256 = "ES256"
    }

    /// Signed request objects (RFC 9101) at `/authorize` (`request`) and `/par`.
    public enum SignedRequestObjects: Sendable, Equatable {
        /// Taken from clients with a registered JWKS; plain requests too.
        case accepted
        /// Nothing else is taken; discovery says `require_signed_request_object: true`.
        case required
    }

    /// Pushed authorization requests (RFC 9126) at `{issuer}/par`.
    public enum PushedAuthorizationRequests: Sendable, Equatable {
        /// No `/par`; discovery names none.
        case notOffered
        /// `/par` takes pushed requests; `/authorize` takes either kind.
        case offered
        /// `/authorize` takes pushed requests only; discovery says
        /// `require_pushed_authorization_requests: true`.
        case required
    }

    /// What `/authorize` does with a valid request.
    public enum AuthorizeBehaviour: Sendable, Equatable {
        /// Sign the configured user in at once and redirect with `code`, `state` and `iss`.
        case signIn
        /// Redirect with this error (`access_denied`, `login_required`, …) and description instead.
        case error(String, description: String? = nil)
        /// Show a small HTML page with "Sign in" and "Cancel" buttons, for demos in a real browser.
        case loginPage
    }
}
