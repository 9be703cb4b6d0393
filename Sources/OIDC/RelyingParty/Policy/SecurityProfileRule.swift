internal import Foundation

/// One rule of a ``SecurityProfile``: the spec section it comes from, and what in a relying party's
/// settings breaks it (a sentence saying what to set), or `nil` when they keep it.
struct SecurityProfileRule: Sendable {
    /// The profile's name, as errors' `profile` context says it.
    let profile: String
    /// The rule, with its spec section: the error's `rule` context.
    let rule: String
    /// What breaks the rule in these settings, or `nil`.
    let violation: @Sendable (RelyingParty) -> String?

    /// The error of a relying party that breaks this rule.
    func refusal(_ what: String) -> OIDCError {
        OIDCError(.profileViolation, "FAPI 2.0 (\(rule)): \(what) No authorization request was sent.", context: ["profile": profile, "rule": rule])
    }
}

extension SecurityProfileRule {
    /// The signature algorithms FAPI 2.0 allows (Security Profile §5.4.1): PS256, ES256 and EdDSA
    /// (with Ed25519, also by its fully-specified name, RFC 9864).
    static let fapi2Algorithms: Set<JWSAlgorithm> = [.ps256, .es256, .edDSA, .ed25519]

    private static let cryptography = "Security Profile §5.4.1, cryptography"
    private static let senderConstraint = "Security Profile §5.3.2.1, sender-constrained access tokens"

    private static func fapi2(_ rule: String, _ violation: @escaping @Sendable (RelyingParty) -> String?) -> SecurityProfileRule {
        SecurityProfileRule(profile: "fapi2", rule: rule, violation: violation)
    }

    /// The rules of the FAPI 2.0 Security Profile, one row each, in the order they are checked.
    static let fapi2: [SecurityProfileRule] = [
        fapi2("Security Profile §5.3.2.2, pushed authorization requests") { rp in
            rp.provider.pushedAuthorizationRequestEndpoint != nil ? nil
                : "the provider \(rp.provider.issuer) names no pushed_authorization_request_endpoint; use a provider that offers PAR (RFC 9126), or set ProviderConfiguration.pushedAuthorizationRequestEndpoint."
        },
        fapi2(senderConstraint) { rp in
            rp.bindsTokensWithDPoP || rp.sendsCertificateBoundTokens ? nil
                : "the tokens would be bearer tokens; make the relying party with RelyingParty.Configuration(dpop: .on) (formerly RelyingParty.dpop = .on; oidc login --dpop), or give the transport a client certificate (mTLS, RFC 8705)."
        },
        // A certificate alone does not bind the tokens: the provider must say it binds them, since
        // a certificate-bound token looks like any other to the client (no token_type to check).
        fapi2(senderConstraint) { rp in
            rp.bindsTokensWithDPoP || rp.provider.tlsClientCertificateBoundAccessTokens ? nil
                : "the transport presents a client certificate, but the provider \(rp.provider.issuer) does not say it binds access tokens to it (tls_client_certificate_bound_access_tokens), so they may be bearer tokens; make the relying party with RelyingParty.Configuration(dpop: .on) (formerly RelyingParty.dpop = .on; oidc login --dpop), or, when the provider does bind them without saying so, set ProviderConfiguration.tlsClientCertificateBoundAccessTokens = true."
        },
        fapi2(cryptography) { rp in
            let keys: [(String, JWSAlgorithm?)] = [
                ("the DPoP key", rp.configuration.dpop.algorithm), ("the private_key_jwt key", rp.tokenClient.authentication.signingKey?.algorithm),
                ("the request object key", rp.configuration.frontChannel.requestObjectKey?.algorithm),
            ]
            guard let (what, algorithm) = keys.first(where: { $0.1.map { !fapi2Algorithms.contains($0) } ?? false }), let algorithm else { return nil }
            return "\(what) signs \(algorithm.rawValue); FAPI 2.0 allows PS256, ES256 and EdDSA. Use an EC P-256 key (ES256), an RSA key with PS256, or Ed25519."
        },
        fapi2(cryptography) { rp in
            let named = rp.provider.idTokenSigningAlgorithms
            guard !named.isEmpty, !named.contains(where: { JWSAlgorithm(rawValue: $0).map(fapi2Algorithms.contains) == true }) else { return nil }
            return "the provider \(rp.provider.issuer) signs ID tokens only with \(named.map { UntrustedText.sanitized($0) }.joined(separator: ", ")) (id_token_signing_alg_values_supported); FAPI 2.0 allows PS256, ES256 and EdDSA. Register the client for one of those (id_token_signed_response_alg)."
        },
        fapi2(cryptography) { rp in
            guard rp.configuration.responseMode?.isJARM == true,
                JARMVerifier(provider: rp.provider, clientID: rp.clientID).allowedAlgorithms.isDisjoint(with: fapi2Algorithms)
            else { return nil }
            let named = rp.provider.authorizationSigningAlgorithms
            return "signed authorization responses (JARM) were asked for, and the provider \(rp.provider.issuer) signs them only with \(named.isEmpty ? "RS256 (it names no authorization_signing_alg_values_supported)" : named.map { UntrustedText.sanitized($0) }.joined(separator: ", ")); FAPI 2.0 allows PS256, ES256 and EdDSA. Register the client for one of those (authorization_signed_response_alg), or leave RelyingParty.Configuration.responseMode unset."
        },
        fapi2("Security Profile §5.3.2.1, client assertion audience") { rp in
            let authentication = rp.tokenClient.authentication
            return authentication.method != .privateKeyJWT || authentication.assertionAudience == .issuer ? nil
                : "client assertions are addressed to each endpoint; FAPI 2.0 addresses them to the issuer alone. Leave ClientAuthentication.assertionAudience at .issuer."
        },
        fapi2("Security Profile §5.3.2.1, client authentication") { rp in
            let method = rp.tokenClient.authentication.method
            return method == .privateKeyJWT || method.isMutualTLS ? nil
                : "the client authenticates with \(method.rawValue); FAPI 2.0 takes only private_key_jwt, tls_client_auth or self_signed_tls_client_auth. Use ClientAuthentication.privateKeyJWT (oidc login --private-key-file) or mTLS."
        },
    ]
}
