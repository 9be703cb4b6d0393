internal import OIDC

extension TestProvider {
    /// An issuer of JWTs that the token endpoint trades for tokens in the JWT bearer grant (RFC 7523
    /// §2.1): a workload identity provider, or another provider whose identity assertions this one
    /// accepts. Its JWTs are checked by ``jwks``, and must name this provider (its issuer or its
    /// token endpoint) in `aud`.
    public struct TrustedAssertionIssuer: Sendable, Equatable {
        /// The `iss` of its JWTs.
        public var issuer: String
        /// Its public keys, a JWK Set as JSON text.
        public var jwks: String

        /// An issuer whose JWTs verify with a key of `jwks`.
        public init(issuer: String, jwks: String) {
            self.issuer = issuer
            self.jwks = jwks
        }
    }
}
