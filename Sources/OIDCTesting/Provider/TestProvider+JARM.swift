extension TestProvider {
    /// Whether the provider signs its authorization responses when asked (JARM,
    /// `response_mode=jwt` or `query.jwt`).
    public enum SignedResponses: Sendable, Equatable {
        /// Not advertised; a request for them is refused with `invalid_request`, as other modes are.
        case notOffered
        /// Advertised (`response_modes_supported` lists `jwt` and `query.jwt`;
        /// `authorization_signing_alg_values_supported` the ID-token algorithm), and sent when asked
        /// for: the redirect carries only `response`, a JWT signed with the ID-token key, with `iss`,
        /// `aud` (the client), `exp` (5 minutes), and `code`, `state`, `iss` or the error parameters.
        case offered
    }

    /// A broken signed response (JARM) that `/authorize` sends when one is asked for
    /// (``Configuration/signedResponseFault``), each breaking one rule a client must check.
    public enum SignedResponseFault: Sendable, Equatable, CaseIterable {
        /// `iss` is another issuer (the provider's issuer with `/other` appended).
        case wrongIssuer
        /// `aud` is another client (`another-client`).
        case wrongAudience
        /// `exp` is 10 minutes past.
        case expired
        /// The payload is changed after signing, so the signature does not verify.
        case badSignature
        /// Signed with a key the provider does not publish (an unknown `kid`).
        case unknownKey
        /// A five-part value shaped like an encrypted response (a JWE header with `alg` `RSA-OAEP-256`
        /// and `enc` `A256GCM`, random parts); nothing is really encrypted.
        case encrypted
        /// The plain `code`, `state` and `iss` parameters, as if no signed response had been asked
        /// for: a downgrade.
        case plainCode
        /// No parameter at all.
        case noResponse
    }
}
