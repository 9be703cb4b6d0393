internal import Foundation

/// A security profile a ``RelyingParty`` holds itself to: every setting the profile forbids is
/// refused before anything is sent, with an error (``OIDCError/Code/profileViolation``) naming the rule.
public enum SecurityProfile: String, Sendable, CaseIterable {
    /// No profile: what the provider and the settings allow.
    case none
    /// The [FAPI 2.0 Security Profile](https://openid.net/specs/fapi-security-profile-2_0-final.html):
    /// pushed authorization requests, sender-constrained tokens (DPoP or mTLS), `private_key_jwt`
    /// or mTLS client authentication, the RFC 9207 `iss` in every authorization response, ID tokens
    /// signed with PS256, ES256 or EdDSA, request URIs that live under 600 seconds.
    case fapi2
}

extension RelyingParty {
    /// The ID-token algorithms FAPI 2.0 allows (Security Profile §5.4.1).
    public static let fapi2Algorithms: Set<JWSAlgorithm> = [.ps256, .es256, .edDSA]

    /// The longest request URI lifetime FAPI 2.0 allows (`expires_in` under 600 s, §5.3.2.2).
    static let fapi2RequestURILifetime = 600

    /// Checks this relying party's settings against ``securityProfile`` before a login sends
    /// anything: for FAPI 2.0, a provider with pushed authorization requests, a sender constraint
    /// (``dpop`` on, or a client certificate in the transport), and `private_key_jwt`,
    /// `tls_client_auth` or `self_signed_tls_client_auth` client authentication.
    ///
    /// - Throws: ``OIDCError/Code/profileViolation`` naming the rule broken and what to set.
    public func checkSecurityProfile() throws(OIDCError) {
        guard securityProfile == .fapi2 else { return }
        func refuse(_ rule: String, _ what: String) -> OIDCError {
            OIDCError(.profileViolation, "FAPI 2.0 (\(rule)): \(what) No authorization request was sent.", context: ["profile": "fapi2", "rule": rule])
        }
        guard provider.pushedAuthorizationRequestEndpoint != nil else {
            throw refuse(
                "Security Profile §5.3.2.2, pushed authorization requests",
                "the provider \(provider.issuer) names no pushed_authorization_request_endpoint; use a provider that offers PAR (RFC 9126), or set ProviderConfiguration.pushedAuthorizationRequestEndpoint."
            )
        }
        guard dpop != .off || sendsCertificateBoundTokens else {
            throw refuse(
                "Security Profile §5.3.2.1, sender-constrained access tokens",
                "the tokens would be bearer tokens; set RelyingParty.dpop = .on (oidc login --dpop), or give the transport a client certificate (mTLS, RFC 8705)."
            )
        }
        // A certificate alone does not bind the tokens: the provider must say it binds them, since
        // a certificate-bound token looks like any other to the client (no token_type to check).
        guard dpop != .off || provider.tlsClientCertificateBoundAccessTokens else {
            throw refuse(
                "Security Profile §5.3.2.1, sender-constrained access tokens",
                "the transport presents a client certificate, but the provider \(provider.issuer) does not say it binds access tokens to it (tls_client_certificate_bound_access_tokens), so they may be bearer tokens; set RelyingParty.dpop = .on (oidc login --dpop), or, when the provider does bind them without saying so, set ProviderConfiguration.tlsClientCertificateBoundAccessTokens = true."
            )
        }
        let algorithms = Self.fapi2Algorithms
        let keys: [(String, JWSAlgorithm?)] = [
            ("the DPoP key", { if case .key(let key) = dpop { key.algorithm } else if case .newKeyPerLogin(let algorithm) = dpop { algorithm } else { nil } }()),
            ("the private_key_jwt key", tokenClient.authentication.signingKey?.algorithm), ("the request object key", requestObjectKey?.algorithm),
        ]
        for (what, algorithm) in keys {
            if let algorithm, !algorithms.contains(algorithm) {
                throw refuse(
                    "Security Profile §5.4.1, cryptography",
                    "\(what) signs \(algorithm.rawValue); FAPI 2.0 allows PS256, ES256 and EdDSA. Use an EC P-256 key (ES256), an RSA key with PS256, or Ed25519."
                )
            }
        }
        let idTokenAlgorithms = provider.idTokenSigningAlgorithms
        if !idTokenAlgorithms.isEmpty, !idTokenAlgorithms.contains(where: { JWSAlgorithm(rawValue: $0).map(algorithms.contains) == true }) {
            throw refuse(
                "Security Profile §5.4.1, cryptography",
                "the provider \(provider.issuer) signs ID tokens only with \(idTokenAlgorithms.map { UntrustedText.sanitized($0) }.joined(separator: ", ")) (id_token_signing_alg_values_supported); FAPI 2.0 allows PS256, ES256 and EdDSA. Register the client for one of those (id_token_signed_response_alg)."
            )
        }
        if responseMode?.isJWTSecured == true {
            let verifiable = JARMVerifier(provider: provider, clientID: clientID).allowedAlgorithms.intersection(algorithms)
            guard !verifiable.isEmpty else {
                throw refuse(
                    "Security Profile §5.4.1, cryptography",
                    "signed authorization responses (JARM) were asked for, and the provider \(provider.issuer) signs them only with \(provider.authorizationSigningAlgorithms.isEmpty ? "RS256 (it names no authorization_signing_alg_values_supported)" : provider.authorizationSigningAlgorithms.map { UntrustedText.sanitized($0) }.joined(separator: ", ")); FAPI 2.0 allows PS256, ES256 and EdDSA. Register the client for one of those (authorization_signed_response_alg), or leave responseMode unset."
                )
            }
        }
        if tokenClient.authentication.method == .privateKeyJWT, tokenClient.authentication.assertionAudience != .issuer {
            throw refuse(
                "Security Profile §5.3.2.1, client assertion audience",
                "client assertions are addressed to each endpoint; FAPI 2.0 addresses them to the issuer alone. Leave ClientAuthentication.assertionAudience at .issuer."
            )
        }
        let method = tokenClient.authentication.method
        guard method == .privateKeyJWT || method.isMutualTLS else {
            throw refuse(
                "Security Profile §5.3.2.1, client authentication",
                "the client authenticates with \(method.rawValue); FAPI 2.0 takes only private_key_jwt, tls_client_auth or self_signed_tls_client_auth. Use ClientAuthentication.privateKeyJWT (oidc login --private-key-file) or mTLS."
            )
        }
    }

    /// What a request must keep of this relying party's settings, whatever a `configure` closure did:
    /// its DPoP key when DPoP is on (else the tokens would come back unbound); under FAPI 2.0,
    /// PKCE S256 and the issuer its response is checked against.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a request without its DPoP key;
    ///   ``OIDCError/Code/profileViolation`` under FAPI 2.0.
    func requireRequestSettings(_ request: AuthorizationRequest) throws(OIDCError) {
        if dpop != .off, request.dpopKey == nil {
            throw .invalidArgument(
                "DPoP is on, and this request has no DPoP key (AuthorizationRequest.dpopKey): its tokens would come back unbound. Make the request with authorizationRequest(redirectURI:) of this relying party."
            )
        }
        guard securityProfile == .fapi2 else { return }
        guard request.pkce?.method == PKCE.method, request.issuer != nil else {
            throw OIDCError(
                .profileViolation,
                "FAPI 2.0 (Security Profile §5.3.2.2, PKCE S256 and the iss check): the request has no PKCE S256 challenge or no issuer to check the response against; make it with authorizationRequest(redirectURI:) of this relying party and leave pkce and issuer as they are.",
                context: ["profile": "fapi2", "rule": "Security Profile §5.3.2.2, PKCE and iss"]
            )
        }
    }

    /// A pushed request URI FAPI 2.0 refuses: one that lives 600 seconds or more.
    func checkPushedLifetime(_ pushed: PushedAuthorization) throws(OIDCError) {
        guard securityProfile == .fapi2, pushed.expiresIn >= Self.fapi2RequestURILifetime else { return }
        throw OIDCError(
            .profileViolation,
            "FAPI 2.0 (Security Profile §5.3.2.2, request_uri lifetime): the provider's request URI lives \(pushed.expiresIn) s, and FAPI 2.0 allows less than 600 s; the provider is not FAPI 2.0 compliant. The browser was not sent to it.",
            context: ["profile": "fapi2", "rule": "Security Profile §5.3.2.2, request_uri lifetime", "expires_in": String(pushed.expiresIn)]
        )
    }
}
