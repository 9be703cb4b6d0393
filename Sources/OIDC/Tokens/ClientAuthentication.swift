package import Foundation

/// How this client proves itself at the provider's endpoints (RFC 6749 §2.3, RFC 7523, OIDC Core §9):
/// one value that every endpoint call uses (token, revocation, introspection, device
/// authorization).
///
/// - ``none``: a public client; only `client_id` in the body (PKCE protects its codes).
/// - ``clientSecretBasic(_:)``, ``clientSecretPost(_:)``: the secret in HTTP Basic or the body.
/// - ``clientSecretJWT(_:algorithm:)``, ``privateKeyJWT(_:)``: a short signed assertion per request
///   (RFC 7523 §2.2): `iss` and `sub` the client id, `aud` the issuer (``AssertionAudience``), a
///   fresh 256-bit `jti`, `iat` now and `exp` ``assertionLifetime`` later; HMAC with the secret, or
///   the client's private key through OpenSSL. The secret or key never leaves the process.
/// - ``tlsClientAuth``, ``selfSignedTLSClientAuth``: mutual TLS (RFC 8705 §2); only `client_id` in
///   the body, the proof is the TLS client certificate of the transport
///   (``NIOHTTPTransport/Configuration/clientCertificate``), without which requests are refused
///   before anything is sent.
///
/// Printing it shows the method, never the secret or the key.
public struct ClientAuthentication: Sendable, CustomStringConvertible {
    /// Whom a client assertion is addressed to (`aud`).
    public enum AssertionAudience: Sendable, Hashable {
        /// The provider's issuer identifier, as one string: what FAPI 2.0 and the update of RFC 7523
        /// require, and what every server that follows them accepts. The default.
        case issuer
        /// The URL of the endpoint the request goes to, as OIDC Core §9 advised: for servers that
        /// follow that older text only.
        case endpoint
    }

    /// The method, as RFC 8414's `token_endpoint_auth_methods_supported` names it.
    public let method: ClientAuthenticationMethod
    /// The client secret (``ClientAuthenticationMethod/clientSecretBasic``, `…Post`, `…JWT`).
    public let secret: Secret?
    /// The private key that signs assertions (``ClientAuthenticationMethod/privateKeyJWT``).
    public let signingKey: JWSSigningKey?
    /// The HMAC algorithm of `client_secret_jwt` assertions: HS256 unless given.
    package let secretAlgorithm: JWSAlgorithm
    /// Whom assertions are addressed to: the issuer unless told otherwise.
    public var assertionAudience: AssertionAudience = .issuer
    /// How long an assertion is valid: 60 s by default, within 10 s…5 min when used.
    public var assertionLifetime: Duration = .seconds(60)

    private init(method: ClientAuthenticationMethod, secret: Secret?, signingKey: JWSSigningKey?, secretAlgorithm: JWSAlgorithm = .hs256) {
        self.method = method
        self.secret = secret
        self.signingKey = signingKey
        self.secretAlgorithm = secretAlgorithm
    }

    /// A public client: only `client_id` in the body.
    public static let none = ClientAuthentication(method: .none, secret: nil, signingKey: nil)

    /// The secret in HTTP Basic, both parts form-encoded first (RFC 6749 §2.3.1).
    public static func clientSecretBasic(_ secret: Secret) -> ClientAuthentication {
        ClientAuthentication(method: .clientSecretBasic, secret: secret, signingKey: nil)
    }

    /// `client_id` and `client_secret` in the form body.
    public static func clientSecretPost(_ secret: Secret) -> ClientAuthentication {
        ClientAuthentication(method: .clientSecretPost, secret: secret, signingKey: nil)
    }

    /// An assertion signed with HMAC keyed by the secret (HS256, HS384 or HS512); the secret must be
    /// at least as long as the hash (32 bytes for HS256, RFC 7518 §3.2).
    public static func clientSecretJWT(_ secret: Secret, algorithm: JWSAlgorithm = .hs256) -> ClientAuthentication {
        ClientAuthentication(method: .clientSecretJWT, secret: secret, signingKey: nil, secretAlgorithm: algorithm)
    }

    /// An assertion signed with the client's private key (RS*, PS*, ES*, EdDSA).
    public static func privateKeyJWT(_ key: JWSSigningKey) -> ClientAuthentication {
        ClientAuthentication(method: .privateKeyJWT, secret: nil, signingKey: key)
    }

    /// Mutual TLS with a certificate issued by a certificate authority the provider trusts (RFC 8705
    /// §2.1, `tls_client_auth`): only `client_id` in the body; the transport presents the certificate.
    public static let tlsClientAuth = ClientAuthentication(method: .tlsClientAuth, secret: nil, signingKey: nil)

    /// Mutual TLS with a self-signed certificate the provider has registered (RFC 8705 §2.2,
    /// `self_signed_tls_client_auth`): only `client_id` in the body; the transport presents the certificate.
    public static let selfSignedTLSClientAuth = ClientAuthentication(method: .selfSignedTLSClientAuth, secret: nil, signingKey: nil)

    /// The authentication a provider configuration's method names, with `secret`: what a
    /// ``TokenClient`` made from a ``ProviderConfiguration`` and a secret uses. A method that needs a
    /// private key gets none here: requests then fail, saying so, before anything is sent.
    package init(method: ClientAuthenticationMethod, secret: Secret?) {
        self.init(method: method, secret: secret, signingKey: nil)
    }

    /// `client_secret_basic`, `private_key_jwt (RS256, kid: …)`: never the secret or the key.
    public var description: String {
        switch method {
        case .privateKeyJWT: "\(method.rawValue) (\(signingKey?.description ?? "no key"))"
        case .clientSecretJWT: "\(method.rawValue) (\(secretAlgorithm.rawValue))"
        default: method.rawValue
        }
    }

    /// The form parameters whose values are secrets, for redaction.
    static let secretParameters: Set<String> = ["client_secret", "client_assertion"]

    /// The client assertion type of RFC 7523 §2.2.
    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// Authenticates one request to `endpoint`: adds to `form` and `headers` what the method sends.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the method needs a secret or a key that is
    ///   not configured; ``OIDCError/Code/randomFailure`` or ``OIDCError/Code/cryptoFailure`` when an
    ///   assertion cannot be made.
    package func authenticate(
        _ form: inout [OAuthParameter], headers: inout HTTPHeaders, clientID: String, endpoint: URL, issuer: String, now: Date
    ) throws(OIDCError) {
        switch method {
        case .none, .tlsClientAuth, .selfSignedTLSClientAuth:
            form.insert(OAuthParameter("client_id", clientID), at: 0)
        case .clientSecretBasic:
            let secret = try requireSecret()
            let credentials = FormURLEncoding.encode(value: clientID) + ":" + FormURLEncoding.encode(value: secret.revealedValue)
            headers.add("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString())
        case .clientSecretPost:
            let secret = try requireSecret()
            form.insert(contentsOf: [OAuthParameter("client_id", clientID), OAuthParameter("client_secret", secret.revealedValue)], at: 0)
        case .clientSecretJWT, .privateKeyJWT:
            let assertion = try self.assertion(clientID: clientID, audience: assertionAudience == .issuer ? issuer : endpoint.absoluteString, now: now)
            form.insert(
                contentsOf: [
                    OAuthParameter("client_id", clientID), OAuthParameter("client_assertion_type", Self.assertionType),
                    OAuthParameter("client_assertion", assertion),
                ], at: 0)
        }
    }

    /// A fresh client assertion for `audience` (RFC 7523 §3).
    package func assertion(clientID: String, audience: String, now: Date) throws(OIDCError) -> String {
        let lifetime = min(max(assertionLifetime, .seconds(10)), .seconds(300)).timeInterval
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        let claims: [String: JSONValue] = [
            "iss": .string(clientID), "sub": .string(clientID), "aud": .string(audience), "jti": .string(try RandomToken.generate()),
            "iat": .number(issuedAt), "exp": .number(issuedAt + lifetime.rounded(.down)),
        ]
        if method == .privateKeyJWT {
            guard let signingKey else {
                throw OIDCError(.invalidArgument, "The client authenticates with private_key_jwt, and no private key is configured.")
            }
            return try signingKey.sign(claims: claims, type: "JWT")
        }
        let secret = try requireSecret()
        guard secretAlgorithm.isHMACAlgorithm else {
            throw OIDCError(.invalidArgument, "client_secret_jwt signs with HS256, HS384 or HS512, not \(secretAlgorithm.rawValue).")
        }
        let header: JSONValue = .object(["alg": .string(secretAlgorithm.rawValue), "typ": "JWT"])
        let input = Base64URLEncoding.encode(Array(header.jsonText.utf8)) + "." + Base64URLEncoding.encode(Array(JSONValue.object(claims).jsonText.utf8))
        var key = Array(secret.revealedValue.utf8)
        defer { LibCrypto.cleanse(&key) }
        let least = secretAlgorithm == .hs256 ? 32 : secretAlgorithm == .hs384 ? 48 : 64
        guard key.count >= least else {
            // RFC 7518 §3.2: a key at least as long as the hash; a server that follows it refuses less.
            throw OIDCError(
                .invalidArgument,
                "client_secret_jwt with \(secretAlgorithm.rawValue) needs a client secret of at least \(least) bytes (RFC 7518 §3.2); this one is shorter. Ask the provider for a longer secret, or use another method.")
        }
        let signature = try LibCrypto.hmac(digest: secretAlgorithm.digestName ?? "SHA256", key: key, data: Array(input.utf8))
        return input + "." + Base64URLEncoding.encode(signature)
    }

    private func requireSecret() throws(OIDCError) -> Secret {
        guard let secret, !secret.revealedValue.isEmpty else {
            throw .invalidArgument("The provider expects \(method.rawValue), and no client secret is configured.")
        }
        return secret
    }
}
